import type { Request, Response, Router } from 'express';
import { sendPage, type DashboardServices } from './context.js';
import { dashboardContext, DASHBOARD_PATH, handle, organizationOf, setFlash } from './session.js';
import { messagePage } from './views/auth-pages.js';
import { keysPage, keyStatus, revokeKeyPage, tomorrow, type KeyForm } from './views/keys-page.js';

const field = (req: Request, name: string) => {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/** Checks the create form; the expiry date means "valid until the start of that day, UTC". */
export function parseKeyForm(form: KeyForm, now: number): { errors: Partial<Record<keyof KeyForm, string>>; expiresAt: Date | null } {
  const errors: Partial<Record<keyof KeyForm, string>> = {};
  const name = form.name.trim();
  if (name === '') errors.name = 'Give the key a name.';
  else if (name.length > 200) errors.name = 'The name can be at most 200 characters.';
  let expiresAt: Date | null = null;
  if (form.expires !== '') {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(form.expires);
    const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : undefined;
    if (!date || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== form.expires) {
      errors.expires = 'Enter a date as YYYY-MM-DD.';
    } else if (form.expires < tomorrow(now)) {
      errors.expires = `The expiry date must be in the future (${tomorrow(now)} or later).`;
    } else {
      expiresAt = date;
    }
  }
  return { errors, expiresAt };
}

export function mountKeyRoutes(router: Router, services: DashboardServices): void {
  const { data, sessions } = services;

  const findKey = async (res: Response, id: string) => {
    const keys = await data.apiKeys.list(organizationOf(res).organizationId);
    return keys.find((key) => key.id === id);
  };

  const notFound = (res: Response) =>
    sendPage(
      res,
      messagePage(services.assets, {
        title: 'Key not found',
        message: 'This API key does not exist in your organization.',
        ctx: dashboardContext(res),
        action: { href: `${DASHBOARD_PATH}/keys`, label: 'Back to API keys' },
      }),
      404,
    );

  router.get(
    '/keys',
    handle(async (_req, res) => {
      const organizationId = organizationOf(res).organizationId;
      const keys = await data.apiKeys.list(organizationId);
      const requireSignedLinks = await data.accounts.requiresSignedLinks(organizationId);
      sendPage(res, keysPage({ ctx: dashboardContext(res), assets: services.assets, keys, now: services.now(), requireSignedLinks }));
    }),
  );

  router.post(
    '/keys',
    handle(async (req, res) => {
      const ctx = dashboardContext(res);
      const organization = organizationOf(res);
      const form: KeyForm = { name: field(req, 'name'), expires: field(req, 'expires').trim() };
      const now = services.now();
      const { errors, expiresAt } = parseKeyForm(form, now);
      if (Object.keys(errors).length > 0) {
        const keys = await data.apiKeys.list(organization.organizationId);
        const requireSignedLinks = await data.accounts.requiresSignedLinks(organization.organizationId);
        sendPage(res, keysPage({ ctx, assets: services.assets, keys, now, requireSignedLinks, form, errors }), 422);
        return;
      }
      // Owned by the signed-in user: the key stops working if their membership is deactivated.
      const created = await data.apiKeys.create({
        organizationId: organization.organizationId,
        userId: ctx.session.userId,
        name: form.name.trim(),
        expiresAt,
      });
      services.logger.info(
        { keyId: created.id, organizationId: organization.organizationId, userId: ctx.session.userId },
        'dashboard: API key created',
      );
      await setFlash(sessions, res, {
        kind: 'success',
        message: `API key “${created.name}” created.`,
        newKey: { name: created.name, value: created.key, id: created.id, signingSecret: created.signingSecret },
        page: '/keys',
      });
      res.redirect(303, `${DASHBOARD_PATH}/keys`);
    }),
  );

  router.post(
    '/keys/require-signed-links',
    handle(async (req, res) => {
      const organizationId = organizationOf(res).organizationId;
      const required = field(req, 'requireSignedLinks') === 'on';
      await data.accounts.setRequireSignedLinks(organizationId, required);
      services.logger.info(
        { organizationId, required, userId: dashboardContext(res).session.userId },
        'dashboard: signed-links setting changed',
      );
      await setFlash(sessions, res, {
        kind: 'success',
        message: required
          ? 'Signed links are now required: apiKey in the query string is refused.'
          : 'apiKey in the query string is accepted again.',
        page: '/keys',
      });
      res.redirect(303, `${DASHBOARD_PATH}/keys`);
    }),
  );

  router.post(
    '/keys/:id/rotate-secret',
    handle(async (req, res) => {
      const key = await findKey(res, String(req.params.id));
      if (!key || key.revoked_at !== null) return notFound(res);
      const rotated = await data.apiKeys.rotateSigningSecret(key.id);
      services.logger.info({ keyId: key.id, userId: dashboardContext(res).session.userId }, 'dashboard: signing secret rotated');
      await setFlash(sessions, res, {
        kind: 'success',
        message: `New signing secret for “${key.name}”.`,
        newSecret: { name: key.name, id: key.id, signingSecret: rotated.signingSecret },
        page: '/keys',
      });
      res.redirect(303, `${DASHBOARD_PATH}/keys`);
    }),
  );

  router.get(
    '/keys/:id/revoke',
    handle(async (req, res) => {
      const key = await findKey(res, String(req.params.id));
      if (!key) return notFound(res);
      if (keyStatus(key, services.now()) === 'revoked') return res.redirect(303, `${DASHBOARD_PATH}/keys`);
      sendPage(res, revokeKeyPage(dashboardContext(res), services.assets, key));
    }),
  );

  router.post(
    '/keys/:id/revoke',
    handle(async (req, res) => {
      const key = await findKey(res, String(req.params.id));
      if (!key) return notFound(res);
      if (key.revoked_at === null) {
        await data.apiKeys.revoke(key.id);
        services.logger.info({ keyId: key.id, userId: dashboardContext(res).session.userId }, 'dashboard: API key revoked');
      }
      await setFlash(sessions, res, {
        kind: 'success',
        message: `API key “${key.name}” revoked. Requests made with it now get 401.`,
        page: '/keys',
      });
      res.redirect(303, `${DASHBOARD_PATH}/keys`);
    }),
  );
}

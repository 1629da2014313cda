import type { Request, Response, Router } from 'express';
import { ApiError } from '../errors.js';
import { StorageEncryptionError } from '../security/secret-box.js';
import { StorageConfigError, type StorageConfigRecord } from '../store/storage-config-repository.js';
import { sendPage, type DashboardServices } from './context.js';
import { dashboardContext, DASHBOARD_PATH, handle, organizationOf, setFlash } from './session.js';
import { messagePage } from './views/auth-pages.js';
import { deleteStoragePage, emptyStorageForm, storageFormPage, storageListPage, type StorageForm } from './views/storage-page.js';

function readForm(req: Request): StorageForm {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof body[name] === 'string' ? (body[name] as string).trim() : '');
  return {
    name: text('name'),
    endpoint: text('endpoint'),
    bucket: text('bucket'),
    region: text('region') || 'us-east-1',
    accessKeyId: text('accessKeyId'),
    // Secrets are taken as typed: leading or trailing spaces could be part of them.
    secretAccessKey: typeof body.secretAccessKey === 'string' ? body.secretAccessKey : '',
    forcePathStyle: body.forcePathStyle === 'on',
    isDefault: body.isDefault === 'on',
  };
}

/** Messages the user can act on (a field, the missing encryption key); anything else is logged. */
function userFacingError(error: unknown): string | undefined {
  if (error instanceof StorageConfigError) return `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`;
  if (error instanceof StorageEncryptionError) return error.message;
  return undefined;
}

const formOf = (config: StorageConfigRecord): StorageForm => ({
  name: config.name,
  endpoint: config.endpoint,
  bucket: config.bucket,
  region: config.region,
  accessKeyId: config.accessKeyId,
  secretAccessKey: '',
  forcePathStyle: config.forcePathStyle,
  isDefault: config.isDefault,
});

/** The configuration fields a submitted form carries; the default flag is handled by each route. */
function configurationFields(form: StorageForm) {
  return {
    name: form.name,
    endpoint: form.endpoint,
    bucket: form.bucket,
    region: form.region,
    accessKeyId: form.accessKeyId,
    secretAccessKey: form.secretAccessKey,
    forcePathStyle: form.forcePathStyle,
  };
}

export function mountStorageRoutes(router: Router, services: DashboardServices): void {
  const { data, sessions, assets, encryptionConfigured } = services;
  const listUrl = `${DASHBOARD_PATH}/storage`;

  const findConfig = (res: Response, id: string) => data.storageConfigs.get(organizationOf(res).organizationId, id);
  const notFound = (res: Response) =>
    sendPage(
      res,
      messagePage(assets, {
        title: 'Storage configuration not found',
        message: 'This storage configuration does not exist in your organization (it may have been deleted).',
        ctx: dashboardContext(res),
        action: { href: listUrl, label: 'Back to storage' },
      }),
      404,
    );

  router.get(
    '/storage',
    handle(async (_req, res) => {
      const configs = await data.storageConfigs.list(organizationOf(res).organizationId);
      sendPage(res, storageListPage({ ctx: dashboardContext(res), assets, configs, encryptionConfigured }));
    }),
  );

  router.get('/storage/new', (_req, res) => {
    sendPage(res, storageFormPage({ ctx: dashboardContext(res), assets, form: emptyStorageForm(), encryptionConfigured }));
  });

  router.post(
    '/storage',
    handle(async (req, res) => {
      const form = readForm(req);
      try {
        const created = await data.storageConfigs.create(organizationOf(res).organizationId, {
          ...configurationFields(form),
          ...(form.isDefault ? { isDefault: true } : {}),
        });
        await setFlash(sessions, res, {
          kind: 'success',
          message: `Saved “${created.name}”${created.isDefault ? ' as the default' : ''}. Use “Test connection” to check that Daguerre can write to it.`,
          about: created.id,
          page: '/storage',
        });
        res.redirect(303, `${listUrl}#config-${created.id}`);
      } catch (error) {
        const message = userFacingError(error);
        if (!message) throw error;
        sendPage(res, storageFormPage({ ctx: dashboardContext(res), assets, form, error: message, encryptionConfigured }), 422);
      }
    }),
  );

  router.get(
    '/storage/:id/edit',
    handle(async (req, res) => {
      const config = await findConfig(res, String(req.params.id));
      if (!config) return notFound(res);
      sendPage(res, storageFormPage({ ctx: dashboardContext(res), assets, existing: config, form: formOf(config), encryptionConfigured }));
    }),
  );

  router.post(
    '/storage/:id',
    handle(async (req, res) => {
      const existing = await findConfig(res, String(req.params.id));
      if (!existing) return notFound(res);
      const form = readForm(req);
      try {
        const updated = await data.storageConfigs.update(organizationOf(res).organizationId, existing.id, configurationFields(form));
        if (!updated) return notFound(res);
        await setFlash(sessions, res, {
          kind: 'success',
          message: `Saved the changes to “${updated.name}”.`,
          about: updated.id,
          page: '/storage',
        });
        res.redirect(303, `${listUrl}#config-${updated.id}`);
      } catch (error) {
        const message = userFacingError(error);
        if (!message) throw error;
        sendPage(res, storageFormPage({ ctx: dashboardContext(res), assets, existing, form, error: message, encryptionConfigured }), 422);
      }
    }),
  );

  router.post(
    '/storage/:id/test',
    handle(async (req, res) => {
      const organizationId = organizationOf(res).organizationId;
      const config = await findConfig(res, String(req.params.id));
      if (!config) return notFound(res);
      const started = Date.now();
      let flash;
      try {
        const target = await data.storageConfigs.getDecrypted(organizationId, config.id);
        if (!target) return notFound(res);
        // Bounded by the uploader's own connect and request timeouts; aborted if the user leaves.
        const aborted = new AbortController();
        res.on('close', () => aborted.abort());
        await data.storage.probeWrite(target, aborted.signal);
        flash = {
          kind: 'success' as const,
          message: `Connection works: Daguerre wrote a test object to “${config.bucket}” and deleted it again (${Date.now() - started} ms).`,
        };
      } catch (error) {
        const message = error instanceof ApiError || error instanceof StorageEncryptionError ? error.message : undefined;
        if (!message) services.logger.error({ err: error, configId: config.id }, 'dashboard: connection test failed unexpectedly');
        flash = {
          kind: 'error' as const,
          message: message ?? 'Connection test failed with an unexpected error; the server log has the details.',
        };
      }
      await setFlash(sessions, res, { ...flash, about: config.id, page: '/storage' });
      res.redirect(303, `${listUrl}#config-${config.id}`);
    }),
  );

  router.post(
    '/storage/:id/default',
    handle(async (req, res) => {
      const config = await findConfig(res, String(req.params.id));
      if (!config) return notFound(res);
      await data.storageConfigs.setDefault(organizationOf(res).organizationId, config.id);
      await setFlash(sessions, res, {
        kind: 'success',
        message: `“${config.name}” is now the default: new captures are uploaded to it.`,
        page: '/storage',
      });
      res.redirect(303, listUrl);
    }),
  );

  router.get(
    '/storage/:id/delete',
    handle(async (req, res) => {
      const config = await findConfig(res, String(req.params.id));
      if (!config) return notFound(res);
      sendPage(res, deleteStoragePage(dashboardContext(res), assets, config));
    }),
  );

  router.post(
    '/storage/:id/delete',
    handle(async (req, res) => {
      const config = await findConfig(res, String(req.params.id));
      if (!config) return notFound(res);
      await data.storageConfigs.delete(organizationOf(res).organizationId, config.id);
      await setFlash(sessions, res, { kind: 'success', message: `Deleted “${config.name}”.`, page: '/storage' });
      res.redirect(303, listUrl);
    }),
  );
}

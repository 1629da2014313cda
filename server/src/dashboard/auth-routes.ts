import type { Request, Response, Router } from 'express';
import { hashPassword, verifyPassword } from '../services/passwords.js';
import { sendPage, type DashboardServices } from './context.js';
import {
  cookieOptions,
  CSRF_FIELD,
  DASHBOARD_PATH,
  dashboardContext,
  handle,
  newToken,
  readCookie,
  safeNext,
  sameToken,
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
} from './session.js';
import { messagePage, signInPage } from './views/auth-pages.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { SignInAttemptRepository } from '../store/sign-in-attempt-repository.js';

const bodyText = (req: Request, name: string) => {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

export function mountAuthRoutes(router: Router, services: DashboardServices): void {
  const { data, sessions, assets } = services;
  // In the database, so that the lock holds across instances (docs/containment.md).
  const throttle = new SignInThrottle(new SignInAttemptRepository(data.db));
  // Unknown emails are checked against this hash too, so a wrong email takes as long as a wrong password.
  let decoyHash: Promise<string> | undefined;

  /** The sign-in form's double-submit token: a cookie and the same value in the form. */
  const signInToken = (req: Request, res: Response) => {
    const existing = readCookie(req, SIGN_IN_COOKIE);
    if (existing && /^[\w-]{43}$/.test(existing)) return existing;
    const token = newToken();
    res.cookie(SIGN_IN_COOKIE, token, cookieOptions(req, 2 * 60 * 60_000));
    return token;
  };

  router.get(
    '/sign-in',
    handle(async (req, res) => {
      const token = readCookie(req, SESSION_COOKIE);
      if (token && (await sessions.findByToken(token))) return res.redirect(303, safeNext(req.query.next));
      const notice = req.query['signed-out'] !== undefined ? 'You have signed out.' : undefined;
      const next = typeof req.query.next === 'string' ? safeNext(req.query.next) : undefined;
      sendPage(res, signInPage({ assets, signInToken: signInToken(req, res), ...(next ? { next } : {}), ...(notice ? { notice } : {}) }));
    }),
  );

  router.post(
    '/sign-in',
    handle(async (req, res) => {
      const email = bodyText(req, 'email').trim();
      const password = bodyText(req, 'password');
      const next = safeNext(bodyText(req, 'next'));
      const render = (status: number, error: string) =>
        sendPage(res, signInPage({ assets, signInToken: signInToken(req, res), email, next, error }), status);

      const cookieToken = readCookie(req, SIGN_IN_COOKIE);
      if (!cookieToken || !sameToken(bodyText(req, CSRF_FIELD), cookieToken)) {
        return render(403, 'The sign-in form expired or was sent from another site. Please try again.');
      }
      if (email === '' || password === '') return render(400, 'Enter your email and your password.');
      const normalized = email.toLowerCase();
      const address = req.ip ?? 'unknown';
      // Counted and checked in one step before the password is (docs/containment.md): parallel guesses cannot pass together.
      const wait = await throttle.attempt(normalized, address, services.now());
      if (wait > 0) {
        res.setHeader('Retry-After', String(Math.ceil(wait / 1000)));
        return render(429, `Too many sign-in attempts. Try again in ${Math.ceil(wait / 60_000)} minutes.`);
      }

      // Emails are matched as typed, then lower-cased (SQLite compares case-sensitively, MySQL does not).
      const user = (await data.accounts.findUser(email)) ?? (email !== normalized ? await data.accounts.findUser(normalized) : undefined);
      // findUser also matches an id: only an exact (case-insensitive) email may sign in.
      const candidate = user && user.email.toLowerCase() === normalized && user.password_hash ? user : undefined;
      const passwordOk = candidate
        ? await verifyPassword(password, candidate.password_hash!)
        : await verifyPassword(password, await (decoyHash ??= hashPassword(newToken()))).then(() => false);
      if (!candidate || !passwordOk) {
        // Never the typed email (people type passwords into it) nor the password.
        services.logger.info('dashboard: sign-in failed');
        return render(401, 'Incorrect email or password.');
      }
      await throttle.succeed(normalized, address);

      const memberships = await sessions.memberships(candidate.id);
      const organization = memberships.find((m) => m.active) ?? memberships[0];
      await sessions.deleteExpired().catch(() => 0);
      // A new token on every sign-in: a session id planted before sign-in is never promoted.
      const { token } = await sessions.create(candidate.id, organization?.organizationId ?? null, services.now());
      res.cookie(SESSION_COOKIE, token, cookieOptions(req, sessions.absoluteMs));
      res.clearCookie(SIGN_IN_COOKIE, cookieOptions(req));
      services.logger.info({ userId: candidate.id }, 'dashboard: signed in');
      res.redirect(303, next);
    }),
  );

  router.post(
    '/sign-out',
    handle(async (req, res) => {
      await sessions.delete(dashboardContext(res).session.id);
      res.clearCookie(SESSION_COOKIE, cookieOptions(req));
      res.redirect(303, `${DASHBOARD_PATH}/sign-in?signed-out`);
    }),
  );

  router.post(
    '/organization',
    handle(async (req, res) => {
      const ctx = dashboardContext(res);
      const chosen = ctx.memberships.find((m) => m.organizationId === bodyText(req, 'organizationId'));
      if (!chosen) {
        return sendPage(
          res,
          messagePage(assets, { title: 'Organization not found', message: 'You are not a member of that organization.', ctx }),
          404,
        );
      }
      await sessions.setOrganization(ctx.session.id, chosen.organizationId);
      res.redirect(303, `${DASHBOARD_PATH}/usage`);
    }),
  );
}

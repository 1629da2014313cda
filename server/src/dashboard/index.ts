import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { SessionRepository, type SessionTimes } from '../store/session-repository.js';
import { mountAuthRoutes } from './auth-routes.js';
import { sendPage, type DashboardData, type DashboardJobs, type DashboardServices } from './context.js';
import { mountKeyRoutes } from './keys-routes.js';
import { mountSignedLinkRoutes } from './signed-link-routes.js';
import { dashboardContext, DASHBOARD_PATH, loadSession, requireCsrfToken } from './session.js';
import { mountStorageRoutes } from './storage-routes.js';
import { mountUsageRoutes } from './usage-routes.js';
import { mountBatchRoutes } from './batches-routes.js';
import { mountRequestLogRoutes } from './request-log-routes.js';
import { mountJobRoutes } from './jobs-routes.js';
import { mountMonitorRoutes } from './monitors-routes.js';
import { inactiveMembershipPage, messagePage, noOrganizationPage } from './views/auth-pages.js';
import type { Assets } from './views/layout.js';
import { packageFile } from '../package-files.js';
import { ensureDashboardScript } from './script-asset.js';

export interface DashboardDependencies {
  data: DashboardData;
  logger: Logger;
  config: Pick<Config, 'REQUIRE_HTTPS' | 'STORAGE_ENCRYPTION_KEY'> &
    Partial<Pick<Config, 'REQUEST_LOG_RETENTION_DAYS' | 'MONITOR_MIN_INTERVAL_SECONDS'>>;
  /** Async jobs, batches and their webhooks (absent without REDIS_URL: their pages then only read). */
  jobs?: DashboardJobs;
  /** Default: idle 12 hours, absolute 7 days. */
  sessionTimes?: SessionTimes;
  now?: () => number;
}

/** config.ts's default, for a dashboard mounted without the full configuration (tests). */
const DEFAULT_REQUEST_LOG_RETENTION_DAYS = 30;

export const DEFAULT_SESSION_TIMES: SessionTimes = { idleMs: 12 * 60 * 60_000, absoluteMs: 7 * 24 * 60 * 60_000 };

const PUBLIC_DIR = `${packageFile('public', 'dashboard')}/`;

/** Asset URLs carry a hash of the file, so a new release is never served from an old cache. */
function assetUrls(): Assets {
  const versioned = (file: string) => {
    const hash = createHash('sha256')
      .update(readFileSync(`${PUBLIC_DIR}${file}`))
      .digest('hex')
      .slice(0, 10);
    return `${DASHBOARD_PATH}/assets/${file}?v=${hash}`;
  };
  return { css: versioned('dashboard.css'), js: versioned('dashboard.js'), icon: versioned('favicon.svg') };
}

/**
 * Same-origin everything, no inline script or style, no framing. The dashboard's pages and assets
 * are all served from here (no CDN), so the policy can be this strict.
 */
const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/**
 * The web dashboard at /dashboard: sign-in for organization members, API keys, storage
 * configurations, usage and a capture playground. Server-rendered pages, one stylesheet, one
 * small script (bundled from browser/: script-asset.ts); forms work without JavaScript.
 */
export function mountDashboard(app: Express, deps: DashboardDependencies): void {
  ensureDashboardScript(deps.logger);
  const sessions = new SessionRepository(deps.data.db, deps.sessionTimes ?? DEFAULT_SESSION_TIMES);
  const services: DashboardServices = {
    data: deps.data,
    sessions,
    logger: deps.logger,
    assets: assetUrls(),
    encryptionConfigured: Boolean(deps.config.STORAGE_ENCRYPTION_KEY),
    jobs: deps.jobs ?? {},
    requestLogRetentionDays: deps.config.REQUEST_LOG_RETENTION_DAYS ?? DEFAULT_REQUEST_LOG_RETENTION_DAYS,
    // config.ts's default when mounted without the full configuration (tests).
    monitorMinIntervalSeconds: deps.config.MONITOR_MIN_INTERVAL_SECONDS ?? 60,
    now: deps.now ?? Date.now,
  };
  const { assets } = services;
  const router = express.Router();
  router.use(securityHeaders);
  router.use('/assets', express.static(PUBLIC_DIR, { index: false, maxAge: '7d', immutable: true, fallthrough: false }));
  if (deps.config.REQUIRE_HTTPS) {
    router.use((req, res, next) => {
      if (req.secure) return next();
      sendPage(
        res,
        messagePage(assets, {
          title: 'HTTPS required',
          message: 'The dashboard is only available over HTTPS on this server, so that passwords and keys never travel in clear text.',
          action: { href: `https://${req.hostname}${req.originalUrl}`, label: 'Open the HTTPS address' },
        }),
        400,
      );
    });
  }
  router.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 50 }));
  router.get('/', (_req, res) => res.redirect(302, `${DASHBOARD_PATH}/usage`));

  const authRouter = express.Router();
  mountAuthRoutes(authRouter, services);
  // Sign-in works without a session; everything after loadSession needs one.
  router.use((req, res, next) => (req.path === '/sign-in' ? authRouter(req, res, next) : next()));
  router.use(loadSession(sessions));
  router.use(
    requireCsrfToken((_req, res) =>
      sendPage(
        res,
        messagePage(assets, {
          title: 'This form has expired',
          message: 'The security token of the form did not match your session, so nothing was changed. Reload the page and try again.',
          ctx: dashboardContext(res),
        }),
        403,
      ),
    ),
  );
  router.use(authRouter);

  // Everything below acts for an organization: only for an active member.
  router.use((_req, res, next) => {
    const ctx = dashboardContext(res);
    if (!ctx.membership) return sendPage(res, noOrganizationPage(ctx, assets), 403);
    if (!ctx.membership.active) return sendPage(res, inactiveMembershipPage(ctx, assets), 403);
    next();
  });
  mountUsageRoutes(router, services);
  mountKeyRoutes(router, services);
  mountSignedLinkRoutes(router, services);
  mountStorageRoutes(router, services);
  mountJobRoutes(router, services);
  mountBatchRoutes(router, services);
  mountMonitorRoutes(router, services);
  mountRequestLogRoutes(router, services);

  router.use((_req, res) => {
    const ctx = res.locals.dashboard ? dashboardContext(res) : undefined;
    sendPage(
      res,
      messagePage(assets, { title: 'Page not found', message: 'There is no dashboard page at this address.', ...(ctx ? { ctx } : {}) }),
      404,
    );
  });
  const onError: ErrorRequestHandler = (error, _req, res, next) => {
    if (res.headersSent) return next(error);
    const status = typeof (error as { status?: unknown }).status === 'number' ? (error as { status: number }).status : 500;
    if (status >= 500) deps.logger.error({ err: error, requestId: res.locals.daguerre?.requestId }, 'dashboard: request failed');
    const ctx = res.locals.dashboard ? dashboardContext(res) : undefined;
    const clientError = status >= 400 && status < 500;
    sendPage(
      res,
      messagePage(assets, {
        title: status === 404 ? 'Not found' : clientError ? 'Request not understood' : 'Something went wrong',
        message:
          status === 404
            ? 'There is nothing at this address.'
            : clientError
              ? 'The form could not be read. Go back and try again.'
              : `The page could not be loaded. Try again in a moment; if it keeps failing, give your operator this request id: ${String(res.locals.daguerre?.requestId ?? 'unknown')}.`,
        ...(ctx ? { ctx } : {}),
      }),
      clientError ? status : 500,
    );
  };
  router.use(onError);
  app.use(DASHBOARD_PATH, router);
}

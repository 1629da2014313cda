import type { Router } from 'express';
import { sendPage, type DashboardServices } from './context.js';
import { dashboardContext, handle, organizationOf } from './session.js';
import { capturesPerDay, latestCaptures } from './usage-stats.js';
import { keyStatus } from './views/keys-page.js';
import { playgroundPage } from './views/playground-page.js';
import { usagePage } from './views/usage-page.js';

export function mountUsageRoutes(router: Router, services: DashboardServices): void {
  const { data, assets } = services;

  router.get(
    '/usage',
    handle(async (_req, res) => {
      const ctx = dashboardContext(res);
      const organizationId = organizationOf(res).organizationId;
      // The very report /usage gives for a key of this organization, so both always agree.
      const report = await data.usage.report({ keyId: 'dashboard', organizationId, userId: ctx.session.userId, membershipActive: true });
      const start = Date.parse(report.credits.periodStart);
      const end = Date.parse(report.credits.periodEnd);
      const [days, latest, keys] = await Promise.all([
        capturesPerDay(data.db, organizationId, start, end),
        latestCaptures(data.credits, organizationId, 20),
        data.apiKeys.list(organizationId),
      ]);
      const keyNames = new Map(keys.map((key) => [key.id, key.name]));
      sendPage(res, usagePage({ ctx, assets, report, days, latest, keyNames, now: services.now() }));
    }),
  );

  router.get(
    '/playground',
    handle(async (_req, res) => {
      const keys = await data.apiKeys.list(organizationOf(res).organizationId);
      const now = services.now();
      sendPage(
        res,
        playgroundPage(
          dashboardContext(res),
          assets,
          keys.some((key) => keyStatus(key, now) === 'active'),
          keys.filter((key) => keyStatus(key, now) === 'active'),
        ),
      );
    }),
  );
}

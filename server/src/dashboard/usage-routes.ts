import type { Router } from 'express';
import { sendPage, type DashboardServices } from './context.js';
import { dashboardContext, handle, organizationOf } from './session.js';
import { usageByKey } from './usage-by-key.js';
import { usagePeriod } from './usage-period.js';
import { latestCaptures } from './usage-stats.js';
import { keyStatus } from './views/keys-page.js';
import { playgroundPage } from './views/playground-page.js';
import { usagePage } from './views/usage-page.js';

export function mountUsageRoutes(router: Router, services: DashboardServices): void {
  const { data, assets } = services;

  router.get(
    '/usage',
    handle(async (req, res) => {
      const ctx = dashboardContext(res);
      const organizationId = organizationOf(res).organizationId;
      const now = services.now();
      // The very report /usage gives for a key of this organization, so both always agree.
      const report = await data.usage.report({ keyId: 'dashboard', organizationId, userId: ctx.session.userId, membershipActive: true });
      const billing = { start: Date.parse(report.credits.periodStart), end: Date.parse(report.credits.periodEnd) };
      const period = usagePeriod(req.query.period, billing, now);
      const isBilling = period.start === billing.start && period.end === billing.end;
      const [usage, billingUsage, latest, keys] = await Promise.all([
        usageByKey(data.db, organizationId, period.start, period.end),
        // The billing period's card needs its own totals only when another period is shown.
        isBilling ? undefined : usageByKey(data.db, organizationId, billing.start, billing.end),
        latestCaptures(data.credits, organizationId, 20),
        data.apiKeys.list(organizationId),
      ]);
      const billingTotal = (billingUsage ?? usage).total;
      sendPage(
        res,
        usagePage({ ctx, assets, report, period, usage, billingTotal, latest, keys, now, retentionDays: services.requestLogRetentionDays }),
      );
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

import { pipeline } from 'node:stream/promises';
import type { Router } from 'express';
import { ApiError } from '../errors.js';
import { ignoreBecause } from '../ignore-error.js';
import { sendPage, type DashboardServices } from './context.js';
import type { MonitorRouteSupport } from './monitor-route-support.js';
import { dashboardContext, handle, organizationOf, setFlash } from './session.js';
import { monitorRunPage } from './views/monitor-run-page.js';
import { monitorHref, runHref } from './views/monitor-views.js';

/**
 * A monitor run's pages under `/dashboard/monitors/:monitorId/runs/:runId`: the baseline and the run
 * side by side, pin as golden, and the run's images, streamed under the session (never with an API key).
 */
export function mountMonitorRunRoutes(router: Router, services: DashboardServices, support: MonitorRouteSupport): void {
  const { assets, sessions } = services;
  const { ownRecord, ownRun, message, withService } = support;

  router.get(
    '/monitors/:monitorId/runs/:runId',
    handle(async (req, res) =>
      withService(res, async (service) => {
        const organizationId = organizationOf(res).organizationId;
        const monitorId = String(req.params.monitorId);
        const runId = String(req.params.runId);
        const [monitor, record] = await Promise.all([service.get(organizationId, monitorId), ownRecord(organizationId, monitorId)]);
        const run = await ownRun(record, runId);
        // The baseline may have been deleted since (runs past MONITOR_RUNS_KEPT are).
        const baseline = run.baselineRunId
          ? await ownRun(record, run.baselineRunId).catch(ignoreBecause('a baseline deleted since is shown as none'))
          : undefined;
        sendPage(res, monitorRunPage({ ctx: dashboardContext(res), assets, monitor, run, baseline }));
      }),
    ),
  );

  router.post(
    '/monitors/:monitorId/runs/:runId/golden',
    handle(async (req, res) =>
      withService(res, async (service) => {
        const monitorId = String(req.params.monitorId);
        const runId = String(req.params.runId);
        try {
          await service.pin(organizationOf(res).organizationId, monitorId, runId);
        } catch (error) {
          if (error instanceof ApiError && error.status === 409)
            return message(res, 409, 'This run cannot be pinned', error.message, monitorHref(monitorId));
          throw error;
        }
        await setFlash(sessions, res, {
          kind: 'success',
          message: 'Pinned as the golden baseline: later runs are compared with this run.',
          page: `/monitors/${monitorId}/runs/${runId}`,
        });
        res.redirect(303, runHref(monitorId, runId));
      }),
    ),
  );

  const image = (which: 'image' | 'diff') =>
    handle(async (req, res) =>
      withService(res, async (service) => {
        const monitorId = String(req.params.monitorId);
        const runId = String(req.params.runId);
        const file = await service.image(organizationOf(res).organizationId, monitorId, runId, which);
        res.setHeader('Content-Type', 'image/png');
        res.setHeader('Content-Length', String(file.size));
        res.setHeader('Content-Disposition', `inline; filename="${which === 'image' ? 'run' : 'diff'}-${runId}.png"`);
        // Chromium shows an image in a document it styles inline; sandboxed, so nothing there runs.
        res.setHeader('Content-Security-Policy', "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox");
        // A run's files never change: the browser may keep them while the session lasts.
        res.setHeader('Cache-Control', 'private, max-age=3600, immutable');
        await pipeline(file.stream, res).catch((error: unknown) => {
          services.logger.warn({ monitorId, runId, err: error }, 'dashboard: streaming a monitor image failed');
          res.destroy();
        });
      }),
    );
  router.get('/monitors/:monitorId/runs/:runId/image', image('image'));
  router.get('/monitors/:monitorId/runs/:runId/diff', image('diff'));
}

import { CreateMonitorBodySchema, type CreateMonitorBody, type Monitor, type MonitorRun } from '@daguerre/contract';
import type { Request, Response, Router } from 'express';
import { ApiError } from '../errors.js';
import { sendPage, type DashboardServices } from './context.js';
import { dashboardContext, handle, organizationOf, setFlash } from './session.js';
import { isMonitorFormField, monitorFormBody, monitorFormErrors, readMonitorForm } from './monitor-form.js';
import { monitorRouteSupport } from './monitor-route-support.js';
import { mountMonitorRunRoutes } from './monitor-run-routes.js';
import { deleteMonitorPage, monitorPage } from './views/monitor-page.js';
import { monitorHref, monitorsHref } from './views/monitor-views.js';
import { monitorsPage, type MonitorForm, type MonitorFormErrors } from './views/monitors-page.js';

const RUNS_PER_PAGE = 24;

/** The page's own address, for the links a monitor's runs carry (the API's image links). */
const baseUrlOf = (req: Request) => `${req.protocol}://${req.get('host') ?? 'localhost'}`;

/**
 * `/dashboard/monitors`: the organization's monitors and a form to watch a page; a page per monitor
 * (settings, Pause/Resume, Delete, its runs as a timeline of thumbnails, pin as golden) and per run
 * (the baseline and the run side by side, the diff as an overlay, the regions and the text changes).
 * Images are streamed under the session, never with an API key. Another organization's monitor is
 * answered as no monitor at all (404). The run's pages are mounted by monitor-run-routes.ts.
 */
export function mountMonitorRoutes(router: Router, services: DashboardServices): void {
  const { data, assets, sessions } = services;
  const support = monitorRouteSupport(services);
  const { monitors, ownRecord, unavailable, withService, activeKeys, callerOf } = support;

  const showList = async (res: Response, form?: MonitorForm, errors?: MonitorFormErrors, status = 200) => {
    const organizationId = organizationOf(res).organizationId;
    const [list, keys] = await Promise.all([
      monitors ? monitors.list(organizationId) : Promise.resolve([] as Monitor[]),
      activeKeys(organizationId),
    ]);
    sendPage(
      res,
      monitorsPage({
        ctx: dashboardContext(res),
        assets,
        monitors: list,
        keys,
        minIntervalSeconds: services.monitorMinIntervalSeconds,
        available: monitors !== undefined,
        ...(form ? { form } : {}),
        ...(errors ? { errors } : {}),
      }),
      status,
    );
  };

  router.get(
    '/monitors',
    handle(async (_req, res) => showList(res)),
  );

  router.post(
    '/monitors',
    handle(async (req, res) => {
      if (!monitors) return unavailable(res);
      const form = readMonitorForm(req);
      const organizationId = organizationOf(res).organizationId;
      const key = (await activeKeys(organizationId)).find((k) => k.id === form.keyId);
      const parsed = CreateMonitorBodySchema.safeParse(monitorFormBody(form));
      const errors: MonitorFormErrors = parsed.success
        ? {}
        : monitorFormErrors(parsed.error.issues.map((issue) => ({ field: issue.path.join('.'), message: issue.message })));
      if (!key) errors.keyId = 'Choose an active API key of the organization.';
      if (!parsed.success || !key) return showList(res, form, errors, 400);
      let created: Monitor;
      try {
        created = await monitors.create(callerOf(res, key.id), parsed.data as CreateMonitorBody, baseUrlOf(req));
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        const issues = Array.isArray(error.details) ? (error.details as { field?: unknown; message?: unknown }[]) : [];
        const named = issues
          .filter((i) => typeof i.field === 'string' && typeof i.message === 'string')
          .map((i) => ({ field: i.field as string, message: i.message as string }));
        const shown = named.length ? monitorFormErrors(named) : {};
        if (!named.some((i) => isMonitorFormField(i.field))) shown.form = error.message;
        return showList(res, form, shown, error.status);
      }
      services.logger.info({ monitorId: created.monitorId, userId: dashboardContext(res).session.userId }, 'dashboard: monitor created');
      await setFlash(sessions, res, {
        kind: 'success',
        message: `Monitor created: its first run ${created.paused ? 'waits until you resume it' : 'starts now'}.`,
        page: `/monitors/${created.monitorId}`,
      });
      res.redirect(303, monitorHref(created.monitorId));
    }),
  );

  router.get(
    '/monitors/:monitorId',
    handle(async (req, res) =>
      withService(res, async (service) => {
        const organizationId = organizationOf(res).organizationId;
        const monitorId = String(req.params.monitorId);
        const cursor = typeof req.query.cursor === 'string' && req.query.cursor.length <= 200 ? req.query.cursor : undefined;
        const monitor = await service.get(organizationId, monitorId);
        let page: { runs: MonitorRun[]; nextCursor: string | null };
        try {
          page = await service.runs(organizationId, monitorId, { limit: RUNS_PER_PAGE, ...(cursor ? { cursor } : {}) });
        } catch (error) {
          // A cursor typed by hand: the newest runs instead.
          if (!(error instanceof ApiError) || error.status !== 400) throw error;
          page = await service.runs(organizationId, monitorId, { limit: RUNS_PER_PAGE });
        }
        const [keys, record] = await Promise.all([data.apiKeys.list(organizationId), ownRecord(organizationId, monitorId)]);
        sendPage(
          res,
          monitorPage({
            ctx: dashboardContext(res),
            assets,
            monitor,
            runs: page.runs,
            ...(page.nextCursor ? { olderHref: `${monitorHref(monitorId)}?cursor=${encodeURIComponent(page.nextCursor)}` } : {}),
            paged: cursor !== undefined,
            keyName: keys.find((key) => key.id === record.apiKeyId)?.name,
          }),
        );
      }),
    ),
  );

  const setPaused = (paused: boolean) =>
    handle(async (req, res) =>
      withService(res, async (service) => {
        const organizationId = organizationOf(res).organizationId;
        const monitorId = String(req.params.monitorId);
        // Pausing checks no destination: the member acts as the key the monitor belongs to.
        const record = await ownRecord(organizationId, monitorId);
        const after = await service.update(callerOf(res, record.apiKeyId ?? ''), monitorId, { paused });
        services.logger.info({ monitorId, paused, userId: dashboardContext(res).session.userId }, 'dashboard: monitor paused or resumed');
        await setFlash(sessions, res, {
          kind: 'success',
          message: paused
            ? 'Monitor paused: it does not run until you resume it.'
            : `Monitor resumed: ${after.nextRunAt ? 'it runs again now, then on its schedule' : 'it runs on its schedule'}.`,
          page: `/monitors/${monitorId}`,
        });
        res.redirect(303, monitorHref(monitorId));
      }),
    );
  router.post('/monitors/:monitorId/pause', setPaused(true));
  router.post('/monitors/:monitorId/resume', setPaused(false));

  router.get(
    '/monitors/:monitorId/delete',
    handle(async (req, res) =>
      withService(res, async (service) => {
        const monitor = await service.get(organizationOf(res).organizationId, String(req.params.monitorId));
        sendPage(res, deleteMonitorPage(dashboardContext(res), assets, monitor));
      }),
    ),
  );

  router.post(
    '/monitors/:monitorId/delete',
    handle(async (req, res) =>
      withService(res, async (service) => {
        const monitor = await service.get(organizationOf(res).organizationId, String(req.params.monitorId));
        await service.remove(organizationOf(res).organizationId, monitor.monitorId);
        services.logger.info({ monitorId: monitor.monitorId, userId: dashboardContext(res).session.userId }, 'dashboard: monitor deleted');
        await setFlash(sessions, res, { kind: 'success', message: `Monitor “${monitor.name}” deleted, with its runs.`, page: '/monitors' });
        res.redirect(303, monitorsHref);
      }),
    ),
  );

  mountMonitorRunRoutes(router, services, support);
}

import { pipeline } from 'node:stream/promises';
import { CreateMonitorBodySchema, type CreateMonitorBody, type Monitor, type MonitorRun } from '@daguerre/contract';
import type { Request, Response, Router } from 'express';
import { ApiError } from '../errors.js';
import type { AuthenticatedKey } from '../services/api-keys.js';
import { runView } from '../monitors/monitor-view.js';
import type { ApiKeyRow } from '../store/api-key-repository.js';
import { MonitorRepository, type MonitorRecord } from '../store/monitor-repository.js';
import { MonitorRunRepository } from '../store/monitor-run-repository.js';
import { sendPage, type DashboardServices } from './context.js';
import { dashboardContext, handle, organizationOf, setFlash } from './session.js';
import { messageReplies } from './message-replies.js';
import { keyStatus } from './views/keys-page.js';
import { monitorRunPage } from './views/monitor-run-page.js';
import { deleteMonitorPage, monitorPage } from './views/monitor-page.js';
import { monitorHref, monitorsHref, runHref } from './views/monitor-views.js';
import { monitorsPage, type MonitorForm, type MonitorFormErrors } from './views/monitors-page.js';
import { ignoreBecause } from '../ignore-error.js';

const RUNS_PER_PAGE = 24;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const FORM_FIELDS = new Set<keyof MonitorForm>(['url', 'name', 'intervalSeconds', 'threshold', 'ignoreSelectors', 'webhookUrl', 'keyId']);

function readForm(req: Request): MonitorForm {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof body[name] === 'string' ? (body[name] as string).trim() : '');
  return {
    url: text('url'),
    name: text('name'),
    intervalSeconds: text('intervalSeconds'),
    threshold: text('threshold'),
    ignoreSelectors: text('ignoreSelectors'),
    webhookUrl: text('webhookUrl'),
    keyId: text('keyId'),
  };
}

/** The form as POST /monitors' body: empty optional fields left out, selectors one a line. */
function bodyOf(form: MonitorForm): Record<string, unknown> {
  const selectors = form.ignoreSelectors
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  return {
    url: form.url,
    intervalSeconds: form.intervalSeconds,
    ...(form.threshold ? { threshold: form.threshold } : {}),
    ...(form.name ? { name: form.name } : {}),
    ...(form.webhookUrl ? { webhookUrl: form.webhookUrl } : {}),
    ...(selectors.length ? { ignoreSelectors: selectors } : {}),
  };
}

/** Issues naming a field of the form go beside it; any other goes over the form. */
function formErrors(issues: { field: string; message: string }[]): MonitorFormErrors {
  const errors: MonitorFormErrors = {};
  for (const issue of issues) {
    const field = issue.field.split(/[.[]/)[0] as keyof MonitorForm;
    const message = /[.!?]$/.test(issue.message) ? issue.message : `${issue.message}.`;
    if (FORM_FIELDS.has(field)) errors[field] ??= message;
    else errors.form ??= message;
  }
  return errors;
}

/** The page's own address, for the links a monitor's runs carry (the API's image links). */
const baseUrlOf = (req: Request) => `${req.protocol}://${req.get('host') ?? 'localhost'}`;

/**
 * `/dashboard/monitors`: the organization's monitors and a form to watch a page; a page per monitor
 * (settings, Pause/Resume, Delete, its runs as a timeline of thumbnails, pin as golden) and per run
 * (the baseline and the run side by side, the diff as an overlay, the regions and the text changes).
 * Images are streamed under the session, never with an API key. Another organization's monitor is
 * answered as no monitor at all (404).
 */
export function mountMonitorRoutes(router: Router, services: DashboardServices): void {
  const { data, assets, sessions } = services;
  const monitors = services.jobs.monitors?.service;
  // Read beside the service: the key a monitor belongs to, and one run by its id.
  const records = new MonitorRepository(data.db);
  const runRecords = new MonitorRunRepository(data.db);

  /** The monitor's record, only when it is the organization's (the service's own check, for what it does not show). */
  const ownRecord = async (organizationId: string, monitorId: string): Promise<MonitorRecord> => {
    const record = UUID.test(monitorId) ? await records.get(monitorId) : undefined;
    if (!record || record.organizationId !== organizationId)
      throw new ApiError('NOT_FOUND', `No monitor ${monitorId} in this organization`);
    return record;
  };
  const ownRun = async (record: MonitorRecord, runId: string): Promise<MonitorRun> => {
    const run = UUID.test(runId) ? await runRecords.get(runId) : undefined;
    if (!run || run.monitorId !== record.id) throw new ApiError('NOT_FOUND', `No run ${runId} of monitor ${record.id}`);
    return runView(run, record);
  };

  const message = messageReplies(assets, { href: monitorsHref, label: 'Back to monitors' });
  const notFound = (res: Response) =>
    message(res, 404, 'Monitor not found', 'There is no monitor or run with this id in your organization.');
  const unavailable = (res: Response) =>
    message(
      res,
      503,
      'Monitors are not available',
      'This server runs without REDIS_URL, so monitors cannot run here. Ask the operator to set REDIS_URL.',
    );

  /** Runs `work` with the service; its 404 (another organization's monitor, an unknown run) is the page's 404. */
  const withService = async (res: Response, work: (service: NonNullable<typeof monitors>) => Promise<void>): Promise<void> => {
    if (!monitors) return unavailable(res);
    try {
      await work(monitors);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return notFound(res);
      throw error;
    }
  };

  const activeKeys = async (organizationId: string): Promise<ApiKeyRow[]> => {
    const now = services.now();
    return (await data.apiKeys.list(organizationId)).filter((key) => keyStatus(key, now) === 'active');
  };

  /** The caller the service sees: the member, acting with a key of the organization (the one that signs the webhooks). */
  const callerOf = (res: Response, keyId: string): AuthenticatedKey => ({
    keyId,
    organizationId: organizationOf(res).organizationId,
    userId: dashboardContext(res).session.userId,
    membershipActive: true,
  });

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
      const form = readForm(req);
      const organizationId = organizationOf(res).organizationId;
      const key = (await activeKeys(organizationId)).find((k) => k.id === form.keyId);
      const parsed = CreateMonitorBodySchema.safeParse(bodyOf(form));
      const errors: MonitorFormErrors = parsed.success
        ? {}
        : formErrors(parsed.error.issues.map((issue) => ({ field: issue.path.join('.'), message: issue.message })));
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
        const shown = named.length ? formErrors(named) : {};
        if (!named.some((i) => FORM_FIELDS.has(i.field as keyof MonitorForm))) shown.form = error.message;
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

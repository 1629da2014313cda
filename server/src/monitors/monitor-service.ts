import { randomUUID } from 'node:crypto';
import { buffer as readAll } from 'node:stream/consumers';
import {
  captureCredits,
  MONITOR_CAPTURE_FIELDS,
  type CreateMonitorBody,
  type Monitor,
  type MonitorRun,
  type UpdateMonitorBody,
  MONITOR_LIMITS,
} from '@daguerre/contract';
import type { Logger } from 'pino';
import { ApiError, errors, validationError } from '../errors.js';
import type { OpenedFile, ResultFiles } from '../jobs/result-files.js';
import type { AuthenticatedKey } from '../services/api-keys.js';
import type { CaptureService } from '../services/capture-service.js';
import { requireBalance } from '../services/credit-balance.js';
import { decodePageCursor, encodePageCursor } from '../services/page-cursor.js';
import type { CreditRepository } from '../store/credit-repository.js';
import type { MonitorChanges, MonitorRecord, MonitorRepository } from '../store/monitor-repository.js';
import type { MonitorRunRepository } from '../store/monitor-run-repository.js';
import { checkMonitorDestinations, checkMonitorInterval } from './monitor-input-checks.js';
import { captureOptionsOf, runOptions } from './monitor-options.js';
import type { MonitorSchedule } from './monitor-schedule.js';
import { monitorView, runView } from './monitor-view.js';

export interface MonitorServiceOptions {
  minIntervalSeconds: number;
  /** MONITORS_PER_ORGANIZATION: the quota when the plan sets none. */
  defaultLimit: number;
  creditsPerCapture: number;
}

export interface MonitorServiceDependencies {
  monitors: MonitorRepository;
  runs: MonitorRunRepository;
  files: ResultFiles;
  schedule: MonitorSchedule;
  credits: CreditRepository;
  captures: Pick<CaptureService, 'cheapChecks'>;
  checkDestination: (field: string, url: string) => Promise<void>;
  logger: Logger;
}

const CAPTURE_FIELDS = new Set<string>(MONITOR_CAPTURE_FIELDS);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A database that cannot be reached is a 503 that says nothing was done. */
function database<T>(work: Promise<T>): Promise<T> {
  return work.catch((error: unknown) => {
    throw error instanceof ApiError ? error : errors.storeUnavailable('database', error);
  });
}

const cursorOf = (run: { startedAt: number; id: string }) => encodePageCursor(run.startedAt, run.id);
function parseCursor(cursor: string): { startedAt: number; id: string } {
  const row = decodePageCursor(cursor, /[0-9a-f-]{36}/i);
  if (!row) throw validationError([{ field: 'cursor', message: 'cursor must be the nextCursor of a previous page', value: cursor }]);
  return { startedAt: row.at, id: row.id };
}

/**
 * The monitors' use cases behind the routes (and the other faces): create, list, read, change,
 * delete, runs, pin a golden run, a run's images. Every refusal comes before anything is written.
 */
export class MonitorService {
  constructor(
    private readonly deps: MonitorServiceDependencies,
    private readonly options: MonitorServiceOptions,
  ) {}

  async create(key: AuthenticatedKey, body: CreateMonitorBody, baseUrl: string): Promise<Monitor> {
    const organizationId = key.organizationId!;
    const options = captureOptionsOf(body);
    const ignoreSelectors = body.ignoreSelectors ?? [];
    checkMonitorInterval(body.intervalSeconds, this.options.minIntervalSeconds);
    const captureOptions = runOptions({ url: body.url, options, ignoreSelectors });
    await checkMonitorDestinations(this.deps, key, captureOptions, body.webhookUrl);
    // An organization without the credits of one run gets 402 now rather than a monitor paused at once.
    await requireBalance(this.deps.credits, organizationId, captureCredits(captureOptions, this.options.creditsPerCapture), {
      short: errors.insufficientCredits,
      nothingWas: 'charged',
    });
    const limit = (await database(this.deps.monitors.planLimit(organizationId))) ?? this.options.defaultLimit;
    const now = Date.now();
    const paused = body.paused ?? false;
    const record = {
      id: randomUUID(),
      organizationId,
      apiKeyId: key.keyId,
      name: body.name ?? body.url.slice(0, MONITOR_LIMITS.nameMaxLength),
      url: body.url,
      options,
      intervalSeconds: body.intervalSeconds,
      threshold: body.threshold ?? 1,
      webhookUrl: body.webhookUrl ?? null,
      ignoreSelectors,
      paused,
      pausedReason: paused ? ('user' as const) : null,
      baseUrl,
      nextRunAt: paused ? null : now,
      createdAt: now,
    };
    const outcome = await database(this.deps.monitors.createWithin(record, limit));
    if (!outcome.created) {
      throw new ApiError(
        'QUOTA_EXCEEDED',
        `This organization has ${outcome.count} monitors, the most its plan allows (${limit}); delete one or ask for a larger plan. Nothing was created.`,
        {
          details: { field: 'monitors', limit, monitors: outcome.count },
        },
      );
    }
    if (!paused) {
      try {
        await this.deps.schedule.plan(record);
      } catch (error) {
        // Not scheduled: not created either, so the caller's retry is the only copy.
        await this.deps.monitors
          .remove(record.id)
          .catch((removeError: unknown) =>
            this.deps.logger.warn({ monitorId: record.id, err: removeError }, 'could not remove a monitor that could not be scheduled'),
          );
        throw errors.storeUnavailable('job queue (Redis)', error);
      }
    }
    return this.get(organizationId, record.id);
  }

  async list(organizationId: string): Promise<Monitor[]> {
    const monitors = await database(this.deps.monitors.list(organizationId));
    return Promise.all(monitors.map(async (monitor) => monitorView(monitor, await this.deps.runs.latest(monitor.id))));
  }

  async get(organizationId: string, monitorId: string): Promise<Monitor> {
    const monitor = await this.own(organizationId, monitorId);
    return monitorView(monitor, await database(this.deps.runs.latest(monitor.id)));
  }

  async update(key: AuthenticatedKey, monitorId: string, body: UpdateMonitorBody): Promise<Monitor> {
    const organizationId = key.organizationId!;
    const monitor = await this.own(organizationId, monitorId);
    const changes: MonitorChanges = {};
    if (body.intervalSeconds !== undefined) {
      checkMonitorInterval(body.intervalSeconds, this.options.minIntervalSeconds);
      changes.intervalSeconds = body.intervalSeconds;
    }
    if (body.name !== undefined) changes.name = body.name;
    if (body.url !== undefined) changes.url = body.url;
    if (body.threshold !== undefined) changes.threshold = body.threshold;
    if (body.webhookUrl !== undefined) changes.webhookUrl = body.webhookUrl;
    if (body.ignoreSelectors !== undefined) changes.ignoreSelectors = body.ignoreSelectors ?? [];
    // A capture option given replaces the monitor's, null removes it.
    const given = body as Record<string, unknown>;
    const options = { ...monitor.options };
    let optionsChanged = false;
    for (const [field, value] of Object.entries(given)) {
      if (!CAPTURE_FIELDS.has(field)) continue;
      optionsChanged = true;
      if (value === null) delete options[field];
      else options[field] = value;
    }
    if (optionsChanged) changes.options = options;
    const next = { ...monitor, ...changes };
    const captureOptions = runOptions(next);
    // Only what changes is checked again: a destination refused since creation is found by the run itself.
    await checkMonitorDestinations(this.deps, key, captureOptions, body.webhookUrl ?? undefined, {
      url: body.url !== undefined,
      proxyUrl: given.proxyUrl !== undefined && given.proxyUrl !== null,
    });
    // A monitor paused for credits that its user pauses stays paused when credits return.
    const pausedByUser = body.paused === true && monitor.pausedReason !== 'user';
    if (body.paused !== undefined && (body.paused !== monitor.paused || pausedByUser)) {
      changes.paused = body.paused;
      changes.pausedReason = body.paused ? 'user' : null;
      changes.nextRunAt = body.paused ? null : Date.now();
    }
    await database(this.deps.monitors.update(monitorId, changes));
    const paused = changes.paused ?? monitor.paused;
    try {
      if (paused) await this.deps.schedule.unplan(monitorId);
      else if (changes.paused === false || changes.intervalSeconds !== undefined) await this.deps.schedule.plan(next);
    } catch (error) {
      // The database has the change; the reconcile brings the schedule in line when Redis is back.
      this.deps.logger.warn({ monitorId, err: error }, 'could not update the schedule of a monitor now; the reconcile will');
    }
    return this.get(organizationId, monitorId);
  }

  async remove(organizationId: string, monitorId: string): Promise<void> {
    const monitor = await this.own(organizationId, monitorId);
    await this.deps.schedule
      .unplan(monitor.id)
      .catch((error: unknown) =>
        this.deps.logger.warn({ monitorId, err: error }, 'could not remove the schedule of a deleted monitor; the reconcile will'),
      );
    const keys = await database(this.deps.runs.fileKeys(monitor.id));
    await database(this.deps.monitors.remove(monitor.id));
    for (const key of keys)
      await this.deps.files
        .remove(key)
        .catch((error: unknown) => this.deps.logger.warn({ monitorId, key, err: error }, 'could not delete a file of a deleted monitor'));
  }

  async runs(
    organizationId: string,
    monitorId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ runs: MonitorRun[]; nextCursor: string | null }> {
    const monitor = await this.own(organizationId, monitorId);
    const before = page.cursor ? parseCursor(page.cursor) : undefined;
    const runs = await database(this.deps.runs.list(monitor.id, page.limit + 1, before));
    const shown = runs.slice(0, page.limit);
    return {
      runs: shown.map((run) => runView(run, monitor)),
      nextCursor: runs.length > page.limit ? cursorOf(shown[shown.length - 1]!) : null,
    };
  }

  async pin(organizationId: string, monitorId: string, runId: string): Promise<MonitorRun> {
    const monitor = await this.own(organizationId, monitorId);
    const run = await this.ownRun(monitor, runId);
    if (run.status !== 'succeeded' || !run.imageKey) {
      throw new ApiError('INVALID_INPUT', `Run ${runId} is ${run.status}: only a succeeded run can be the golden baseline`, {
        status: 409,
      });
    }
    await database(this.deps.monitors.setGolden(monitor.id, run.id));
    return runView(run, { ...monitor, goldenRunId: run.id });
  }

  /** A run's capture or its diff image, streamed from the result store. */
  async image(organizationId: string, monitorId: string, runId: string, which: 'image' | 'diff'): Promise<OpenedFile> {
    const monitor = await this.own(organizationId, monitorId);
    const run = await this.ownRun(monitor, runId);
    const key = which === 'image' ? run.imageKey : run.diffImageKey;
    const missing =
      which === 'image'
        ? `Run ${runId} has no capture (its status is ${run.status})`
        : `Run ${runId} has no diff image: it changed nothing against its baseline, or had none`;
    if (!key) throw new ApiError('NOT_FOUND', missing);
    const opened = await this.deps.files.open(key).catch((error: unknown) => {
      throw errors.storeUnavailable(`result store (${this.deps.files.description})`, error);
    });
    if (!opened) throw new ApiError('NOT_FOUND', `The file of run ${runId} is no longer in the result store`);
    return opened;
  }

  /** MonitorRunImages (one-off-diff.ts): a succeeded run's PNG and page text, for POST /diff's {runId} sides. */
  async runImage(organizationId: string, runId: string): Promise<{ png: Buffer; text?: string } | undefined> {
    const run = UUID.test(runId) ? await database(this.deps.runs.get(runId, true)) : undefined;
    if (!run || run.organizationId !== organizationId || run.status !== 'succeeded' || !run.imageKey) return undefined;
    const opened = await this.deps.files.open(run.imageKey).catch((error: unknown) => {
      throw errors.storeUnavailable(`result store (${this.deps.files.description})`, error);
    });
    if (!opened) return undefined;
    return { png: await readAll(opened.stream), ...(run.pageText !== null ? { text: run.pageText } : {}) };
  }

  private async own(organizationId: string, monitorId: string): Promise<MonitorRecord> {
    const monitor = UUID.test(monitorId) ? await database(this.deps.monitors.get(monitorId)) : undefined;
    if (!monitor || monitor.organizationId !== organizationId)
      throw new ApiError('NOT_FOUND', `No monitor ${monitorId} in this organization`);
    return monitor;
  }

  private async ownRun(monitor: MonitorRecord, runId: string) {
    const run = UUID.test(runId) ? await database(this.deps.runs.get(runId)) : undefined;
    if (!run || run.monitorId !== monitor.id) throw new ApiError('NOT_FOUND', `No run ${runId} of monitor ${monitor.id}`);
    return run;
  }
}

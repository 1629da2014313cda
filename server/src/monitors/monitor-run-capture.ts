import { randomUUID } from 'node:crypto';
import { buffer as readAll } from 'node:stream/consumers';
import { captureCredits } from '@daguerre/contract';
import type { Logger } from 'pino';
import { ApiError } from '../errors.js';
import type { ResultFiles } from '../jobs/result-files.js';
import type { CaptureService } from '../services/capture-service.js';
import type { FinishedCapture } from '../services/capture-types.js';
import { loggableTarget, type RequestLog } from '../services/request-log.js';
import type { MonitorRecord, MonitorRepository } from '../store/monitor-repository.js';
import type { MonitorRunRecord, MonitorRunRepository, RunEnding } from '../store/monitor-run-repository.js';
import { compareCaptures } from './compare-captures.js';
import { runOptions } from './monitor-options.js';
import { pageTextStep } from './page-text.js';

export const runImageKey = (monitorId: string, runId: string) => `monitors/${monitorId}/${runId}.png`;
export const runDiffKey = (monitorId: string, runId: string) => `monitors/${monitorId}/${runId}-diff.png`;

/** The reasons a run's signal is aborted with; the failed run's message says which. */
export const LEASE_LOST = 'lease-lost';
export const SHUTDOWN = 'shutdown';

export interface RunCaptureDependencies {
  monitors: MonitorRepository;
  runs: MonitorRunRepository;
  captures: CaptureService;
  files: ResultFiles;
  /** A run refused before it reserved credits (no credits, a concurrency wait that timed out) is logged here; others have their ledger row. */
  requestLog?: Pick<RequestLog, 'refused'>;
  logger: Logger;
}

/**
 * The capture of one monitor run and its comparison: the capture through CaptureService (its charge
 * held in `held` until the runner settles it), the PNG and the page's text kept, the diff against the
 * baseline (the golden run, else the previous succeeded run) kept beside. A capture that fails is the
 * run's failed ending, logged as a refusal when it reserved nothing.
 */
export async function captureAndCompare(
  deps: RunCaptureDependencies,
  creditsPerCapture: number,
  monitor: MonitorRecord,
  runId: string,
  signal: AbortSignal,
  held: { capture?: FinishedCapture },
): Promise<RunEnding> {
  const { captures, files, logger } = deps;
  const requestId = randomUUID();
  const text = pageTextStep(monitor.ignoreSelectors);
  const started = Date.now();
  let options;
  let file;
  try {
    options = runOptions(monitor);
    const share = await deps.monitors.planShare(monitor.organizationId);
    file = await captures.capture({
      requestId,
      key: {
        keyId: monitor.apiKeyId ?? '',
        organizationId: monitor.organizationId,
        userId: null,
        membershipActive: true,
        ...(share ? { fairShare: share } : {}),
      },
      options,
      signal,
      // A run waits for the organization's concurrency limit like an async job rather than being refused.
      mode: 'async',
      kind: 'monitor',
      readPage: text.step,
      finish: async (finished) => {
        held.capture = finished;
        return true;
      },
    });
  } catch (error) {
    const failure = error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', 'The capture failed', { logDetail: error });
    if (!(error instanceof ApiError)) logger.error({ monitorId: monitor.id, runId, err: error }, 'monitor run failed unexpectedly');
    // Ignored by the log when the capture reserved credits (its ledger row says how it ended).
    await deps.requestLog?.refused({
      requestId,
      organizationId: monitor.organizationId,
      apiKeyId: monitor.apiKeyId,
      kind: 'monitor',
      format: 'png',
      source: 'url',
      target: loggableTarget(monitor.url),
      errorCode: failure.code,
      httpStatus: failure.status,
      durationMs: Date.now() - started,
      at: started,
    });
    const status = failure.code === 'TARGET_HTTP_ERROR' ? Number((failure.details as { status?: number } | undefined)?.status ?? NaN) : NaN;
    return {
      status: 'failed',
      requestId,
      loadMs: Date.now() - started,
      targetStatus: Number.isFinite(status) ? status : null,
      error: {
        code: failure.code,
        message:
          signal.reason === LEASE_LOST
            ? 'The run lost its lease (the database could not be reached); nothing was charged'
            : signal.reason === SHUTDOWN
              ? 'The process running it stopped; nothing was charged'
              : failure.message,
      },
    };
  }
  const credits = held.capture?.credits ?? captureCredits(options, creditsPerCapture);
  const imageKey = runImageKey(monitor.id, runId);
  const base = {
    requestId: file.requestId,
    credits,
    loadMs: file.processingTime,
    targetStatus: file.page.status,
    imageKey,
    pageText: text.text() ?? null,
  };
  await files.put(imageKey, file.buffer, 'image/png');
  // A redirect chain that ends outside 2xx (a 3xx without a location) is a status change too.
  if (file.page.status !== null && (file.page.status < 200 || file.page.status > 299)) {
    return { ...base, status: 'failed', error: { code: 'TARGET_HTTP_ERROR', message: `The target answered HTTP ${file.page.status}` } };
  }
  const baseline = await baselineOf(deps, monitor);
  if (!baseline) return { ...base, status: 'succeeded' };
  const before = await files.open(baseline.imageKey!).then((opened) => (opened ? readAll(opened.stream) : undefined));
  if (!before) return { ...base, status: 'succeeded' };
  const compared = await compareCaptures({
    before: { png: before, ...(baseline.pageText !== null ? { text: baseline.pageText } : {}) },
    after: { png: file.buffer, ...(base.pageText !== null ? { text: base.pageText } : {}) },
    threshold: monitor.threshold,
  });
  let diffImageKey: string | null = null;
  if (compared.diffPng) {
    diffImageKey = runDiffKey(monitor.id, runId);
    await files.put(diffImageKey, compared.diffPng, 'image/png');
  }
  return { ...base, status: 'succeeded', baselineRunId: baseline.id, diff: compared.diff, diffImageKey };
}

/** The golden run when one is pinned (and still there), else the previous succeeded run. */
async function baselineOf(deps: RunCaptureDependencies, monitor: MonitorRecord): Promise<MonitorRunRecord | undefined> {
  const { runs } = deps;
  // Read now, not at the claim: a run pinned while this one rendered is already its baseline.
  const goldenRunId = (await deps.monitors.get(monitor.id))?.goldenRunId ?? null;
  const golden = goldenRunId ? await runs.get(goldenRunId, true) : undefined;
  const baseline = golden?.status === 'succeeded' ? golden : await runs.lastSucceeded(monitor.id);
  return baseline?.imageKey ? baseline : undefined;
}

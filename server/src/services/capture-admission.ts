import { ApiError } from '../errors.js';
import { CaptureLanes } from '../capture/pool/capture-lanes.js';
import type { LedgerEntry } from '../store/credit-repository.js';
import { captureDeadlines } from './capture-deadlines.js';
import { captureFailure } from './capture-failures.js';
import type { ConcurrencyGate } from './concurrency-gate.js';
import type { CaptureCommand, CaptureFile } from './capture-types.js';

/** What admission needs of a capture: the request, whose it is, and its clock, which a lane place may start again. */
export interface AdmissionRequest {
  command: CaptureCommand;
  entry: Pick<LedgerEntry, 'organizationId'>;
  started: number;
  /** When its lane place came (capture-deadlines.ts). */
  placed?: number;
}

/** Where a capture waits before its turn: both absent, captures go straight to their render. */
export interface AdmissionGates {
  /** The plans' limits of concurrent captures (docs/render-slots.md); absent, no limit. */
  concurrency?: ConcurrencyGate | undefined;
  /** Where videos and other long captures wait for their own places (capture/pool/capture-lanes.ts); absent, they take render slots like any capture. */
  lanes?: CaptureLanes | undefined;
}

/** How long an async video or long capture may wait for a place in its lane; its capture deadline starts when it has one. */
const ASYNC_LANE_WAIT_MS = 15 * 60_000;

/**
 * The waits of a capture before anything is reserved (capture-service.ts): the plan's limit of
 * concurrent captures, then a video's or another long capture's place in its lane.
 */
export class CaptureAdmission {
  constructor(
    private readonly gates: AdmissionGates,
    private readonly options: { captureTimeoutMs: number },
  ) {}

  /** The plan's limit of concurrent captures (concurrency-gate.ts): past it a sync capture gets 429 before anything is reserved, a job waits. */
  withinLimit(job: AdmissionRequest, renderNow: () => Promise<CaptureFile>): Promise<CaptureFile> {
    const { command } = job;
    const render = () => this.inLane(job, renderNow);
    if (!this.gates.concurrency) return render();
    const { budgetMs, page } = this.deadlinesOf(job);
    const limitOf = {
      organizationId: job.entry.organizationId,
      planLimit: command.key.fairShare?.maxConcurrentCaptures,
      wait: command.mode === 'async',
    };
    // The render's own errors are ApiErrors already (mapped as they are); waiting can end in a timeout or a departed client.
    return this.gates.concurrency.run({ ...limitOf, deadline: page, signal: command.signal }, render).catch((error: unknown) => {
      throw captureFailure(error, budgetMs);
    });
  }

  /**
   * A video or another long capture first takes its place in its lane (capture-lanes.ts), before
   * anything is reserved: a synchronous one the instance cannot finish in time is refused there,
   * uncharged. An async one may wait up to ASYNC_LANE_WAIT_MS, and its capture deadline counts from
   * when its place comes. A sync video may wait as long as it can still end by its limit (capture-deadlines.ts).
   */
  private inLane(job: AdmissionRequest, render: () => Promise<CaptureFile>): Promise<CaptureFile> {
    const { command } = job;
    if (!this.gates.lanes || !CaptureLanes.needsLane(command.options)) return render();
    const sync = command.mode !== 'async';
    const { budgetMs, limit } = this.deadlinesOf(job);
    const request = {
      organizationId: job.entry.organizationId,
      options: command.options,
      sync,
      deadline: sync ? limit : Date.now() + ASYNC_LANE_WAIT_MS,
      signal: command.signal,
      sharePercent: command.key.fairShare?.maxSharePercent ?? null,
      // The task's failures come back as answers already: a 504 is a capture that ran out of time.
      ranOutOfTime: (error: unknown) => error instanceof ApiError && error.status === 504,
    };
    return this.gates.lanes
      .run(request, () => {
        job.placed = Date.now();
        if (!sync) job.started = job.placed;
        return render();
      })
      .catch((error: unknown) => {
        throw captureFailure(error, budgetMs);
      });
  }

  private deadlinesOf(job: AdmissionRequest) {
    const clock = { started: job.started, placed: job.placed, async: job.command.mode === 'async' };
    return captureDeadlines(this.options.captureTimeoutMs, job.command.options, clock);
  }
}

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { ApiError } from '../errors.js';
import type { FinishedCapture } from '../services/capture-types.js';
import type { CreditRepository } from '../store/credit-repository.js';
import type { MonitorRecord } from '../store/monitor-repository.js';
import type { MonitorRunRecord, RunEnding } from '../store/monitor-run-repository.js';
import type { MonitorAlerts } from './monitor-alerts.js';
import type { MonitorCredits } from './monitor-credits.js';
import { captureAndCompare, LEASE_LOST, runDiffKey, runImageKey, SHUTDOWN, type RunCaptureDependencies } from './monitor-run-capture.js';
import { runView } from './monitor-view.js';

export interface MonitorRunnerOptions {
  /** The monitor's lease: renewed while a run goes on; a run of a process that died frees it after this long. */
  leaseMs: number;
  runsKept: number;
  creditsPerCapture: number;
}

/**
 * One run of a monitor: take its lease (a monitor never runs twice at once), capture through
 * CaptureService (the fair share of the browser, the charge, the request log), keep the PNG and
 * the page's text, compare with the baseline (the golden run, else the previous succeeded run;
 * monitor-run-capture.ts), settle the charge, alert, and keep MONITOR_RUNS_KEPT runs.
 */
export class MonitorRunner {
  constructor(
    private readonly deps: RunCaptureDependencies & {
      /** Settles the charge a run's capture held: committed once the run is recorded, released when anything after the capture failed. */
      ledger: Pick<CreditRepository, 'commit' | 'release'>;
      alerts: MonitorAlerts;
      credits: MonitorCredits;
    },
    private readonly options: MonitorRunnerOptions,
  ) {}

  private readonly running = new Set<AbortController>();

  /** At shutdown, past the grace period: runs still going end, uncharged and without an alert (the process stopped, not the target). */
  abortAll(): void {
    for (const controller of this.running) controller.abort(SHUTDOWN);
  }

  /** Runs the monitor once, unless it is paused, gone, or running elsewhere (then nothing happens). */
  async run(monitorId: string): Promise<MonitorRunRecord | undefined> {
    const { monitors, runs, logger } = this.deps;
    const token = randomUUID();
    const monitor = await monitors.claim(monitorId, token, this.options.leaseMs);
    if (!monitor) return undefined;
    const controller = new AbortController();
    this.running.add(controller);
    const renewer = setInterval(
      () => {
        monitors.renew(monitorId, token, this.options.leaseMs).then(
          (held) => {
            if (!held) controller.abort(LEASE_LOST);
          },
          (error: unknown) => logger.warn({ monitorId, err: error }, 'could not renew the lease of a monitor run (database)'),
        );
      },
      Math.max(500, Math.round(this.options.leaseMs / 3)),
    );
    const runId = randomUUID();
    const startedAt = Date.now();
    // The capture's charge, held until the run is recorded (CaptureCommand.finish): a run that fails
    // after its capture (a diff refused, the result store or the database down) charges nothing.
    const held: { capture?: FinishedCapture } = {};
    try {
      // Holding the lease, a run still `running` is one whose process died: it ended, uncharged.
      await runs.failAbandoned(monitorId);
      await runs.start({ id: runId, monitorId, organizationId: monitor.organizationId, startedAt });
      let ending: RunEnding;
      try {
        ending = await captureAndCompare(this.deps, this.options.creditsPerCapture, monitor, runId, controller.signal, held);
        ending = await this.settle(ending, held);
        await runs.finish(runId, ending);
      } catch (error) {
        ending = await this.failAfterCapture(monitor, runId, held, error);
      }
      const run = await runs.get(runId);
      if (!run) {
        // Deleted while it ran (its runs went with it): so do the files this run wrote.
        for (const key of [ending.imageKey, ending.diffImageKey])
          if (key) await this.deps.files.remove(key).catch(cannotDelete(logger, monitorId, key));
        return undefined;
      }
      await this.afterRun(monitor, run, ending, controller.signal.reason === SHUTDOWN);
      return run;
    } finally {
      this.running.delete(controller);
      clearInterval(renewer);
      await monitors
        .release(monitorId, token, startedAt + monitor.intervalSeconds * 1_000)
        .catch((error: unknown) => logger.warn({ monitorId, err: error }, 'could not release the lease of a monitor (it ends by itself)'));
    }
  }

  /** Commits the held charge of a succeeded run, releases that of a failed one; the ending says what was charged. */
  private async settle(ending: RunEnding, held: { capture?: FinishedCapture }): Promise<RunEnding> {
    const capture = held.capture;
    if (!capture) return { ...ending, credits: 0 };
    if (ending.status !== 'succeeded') {
      await this.deps.ledger.release(capture.requestId, ending.error?.code ?? null);
      held.capture = undefined;
      return { ...ending, credits: 0 };
    }
    const committed = await this.deps.ledger.commit(capture.requestId, {
      processingMs: capture.processingTime,
      fileSize: capture.buffer.length,
    });
    held.capture = undefined;
    return { ...ending, credits: committed ? capture.credits : 0 };
  }

  /**
   * Anything that failed after the capture: its held charge is released, the files it wrote are
   * removed, and the run is recorded as failed (which alerts). When even that record fails, the
   * next run finds it `running` and ends it as abandoned.
   */
  private async failAfterCapture(
    monitor: MonitorRecord,
    runId: string,
    held: { capture?: FinishedCapture },
    error: unknown,
  ): Promise<RunEnding> {
    const { ledger, files, runs, logger } = this.deps;
    const failure =
      error instanceof ApiError
        ? error
        : new ApiError('INTERNAL_ERROR', 'The run could not be completed; nothing was charged', { logDetail: error });
    logger.warn(
      { monitorId: monitor.id, runId, code: failure.code, err: failure.options.logDetail ?? error },
      'monitor run failed after its capture',
    );
    if (held.capture) {
      await ledger
        .release(held.capture.requestId, failure.code)
        .catch((releaseError: unknown) =>
          logger.error(
            { err: releaseError, requestId: held.capture?.requestId },
            "could not release a monitor run's charge; the stale-reservation sweeper will",
          ),
        );
    }
    for (const key of [runImageKey(monitor.id, runId), runDiffKey(monitor.id, runId)])
      await files.remove(key).catch(cannotDelete(logger, monitor.id, key));
    const ending: RunEnding = {
      status: 'failed',
      requestId: held.capture?.requestId ?? null,
      credits: 0,
      error: {
        code: failure.code,
        message: failure.message.endsWith('nothing was charged') ? failure.message : `${failure.message}; nothing was charged`,
      },
    };
    await runs.finish(runId, ending);
    return ending;
  }

  private async afterRun(monitor: MonitorRecord, run: MonitorRunRecord, ending: RunEnding, stopped: boolean): Promise<void> {
    const { alerts, credits, runs, monitors, files, logger } = this.deps;
    // Deleted while it ran: its files go too.
    const current = await monitors.get(monitor.id);
    if (!current) {
      for (const key of [run.imageKey, run.diffImageKey]) if (key) await files.remove(key).catch(cannotDelete(logger, monitor.id, key));
      return;
    }
    const view = runView(run, current);
    if (run.status === 'failed' && run.error?.code === 'INSUFFICIENT_CREDITS') await credits.ranOut(monitor.organizationId);
    else if (run.status === 'failed' && !stopped) await alerts.failed(current, view);
    else if (ending.diff?.changed) {
      const baseline = ending.baselineRunId ? await runs.get(ending.baselineRunId) : undefined;
      await alerts.changed(current, view, baseline ? runView(baseline, current) : undefined);
    }
    await this.prune(current).catch((error: unknown) =>
      logger.warn({ monitorId: monitor.id, err: error }, 'could not delete the old runs of a monitor'),
    );
  }

  /** Keeps the newest MONITOR_RUNS_KEPT runs, the golden run and the baseline of the next run. */
  private async prune(monitor: MonitorRecord): Promise<void> {
    const { runs, files } = this.deps;
    const lastSucceeded = await runs.lastSucceeded(monitor.id, false);
    await runs.dropTextExcept(monitor.id, [lastSucceeded?.id ?? null, monitor.goldenRunId]);
    const old = (await runs.beyond(monitor.id, this.options.runsKept, monitor.goldenRunId)).filter((run) => run.id !== lastSucceeded?.id);
    for (const run of old) for (const key of [run.imageKey, run.diffImageKey]) if (key) await files.remove(key);
    await runs.remove(old.map((run) => run.id));
  }
}

/** A run's file that could not be deleted stays in storage: said in the log, never failing the run's ending. */
function cannotDelete(logger: Logger, monitorId: string, key: string): (error: unknown) => void {
  return (error) => logger.warn({ monitorId, key, err: error }, 'could not delete a file of a monitor run');
}

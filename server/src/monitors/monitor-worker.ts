import { DelayedError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { MONITOR_QUEUE, type MonitorTick } from './monitor-schedule.js';
import type { MonitorRunner } from './monitor-runner.js';

export interface MonitorWorkerOptions {
  prefix: string;
  /** Runs this process makes at once (MONITOR_WORKERS). */
  concurrency: number;
  /** Of those, at most this many for one organization (MONITOR_MAX_PER_ORGANIZATION). */
  perOrganization: number;
}

/**
 * Takes the monitors' ticks off the queue and runs them. The browser is shared fairly by
 * CaptureService's FairScheduler; this worker's own slots are shared too: an organization already
 * holding its cap waits in the delayed set, not in a slot, so one organization's thousand monitors
 * cannot keep another's from running.
 */
export class MonitorWorker {
  private readonly worker: Worker<MonitorTick>;
  private readonly inFlight = new Map<string, number>();

  constructor(
    connection: Redis,
    private readonly deps: { runner: MonitorRunner; logger: Logger },
    private readonly options: MonitorWorkerOptions,
  ) {
    this.worker = new Worker<MonitorTick>(MONITOR_QUEUE, (job, token) => this.runFairly(job, token), {
      connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
    });
    this.worker.on('failed', (job, error) =>
      deps.logger.warn({ monitorId: job?.data.monitorId, err: error.message }, 'monitor tick failed'),
    );
    this.worker.on('error', (error) => deps.logger.error({ err: error }, 'monitor worker error'));
  }

  private async runFairly(job: Job<MonitorTick>, token: string | undefined): Promise<void> {
    const owner = job.data.organizationId;
    const busy = this.inFlight.get(owner) ?? 0;
    if (busy >= this.options.perOrganization) {
      await job.moveToDelayed(Date.now() + 250 + Math.floor(Math.random() * 500), token);
      throw new DelayedError();
    }
    this.inFlight.set(owner, busy + 1);
    try {
      await this.deps.runner.run(job.data.monitorId);
    } finally {
      const left = (this.inFlight.get(owner) ?? 1) - 1;
      if (left > 0) this.inFlight.set(owner, left);
      else this.inFlight.delete(owner);
    }
  }

  async close(): Promise<void> {
    await this.worker.close();
  }
}

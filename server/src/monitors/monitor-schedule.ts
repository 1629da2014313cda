import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { MonitorRecord, MonitorRepository } from '../store/monitor-repository.js';

export const MONITOR_QUEUE = 'monitors';

/** What a scheduled tick carries: which monitor, and whose (the worker's per-organization cap reads it). */
export interface MonitorTick {
  monitorId: string;
  organizationId: string;
}

type Scheduled = Pick<MonitorRecord, 'id' | 'organizationId' | 'intervalSeconds'>;

/**
 * The monitors' schedules as BullMQ job schedulers (one per monitor, `every` its interval, the
 * first tick at once). Redis holds only a copy: `reconcile` rebuilds it from the database (at
 * start-up and every MONITOR_RECONCILE_INTERVAL_MS), so schedules survive restarts of every process
 * and a Redis restarted empty, and a scheduler whose monitor was deleted or paused elsewhere goes.
 */
export class MonitorSchedule {
  readonly queue: Queue<MonitorTick>;

  constructor(
    connection: Redis,
    private readonly deps: { monitors: MonitorRepository; logger: Logger },
    options: { prefix: string },
  ) {
    this.queue = new Queue(MONITOR_QUEUE, { connection, prefix: options.prefix });
    // Redis down: the callers see their commands fail and the reconcile tries again; no unhandled 'error' event.
    this.queue.on('error', (error) => deps.logger.debug({ err: error }, 'monitor queue error'));
  }

  async plan(monitor: Scheduled): Promise<void> {
    await this.queue.upsertJobScheduler(
      monitor.id,
      { every: monitor.intervalSeconds * 1_000 },
      // Ticks leave Redis when done: the runs' records are in the database.
      {
        name: 'run',
        data: { monitorId: monitor.id, organizationId: monitor.organizationId },
        opts: { removeOnComplete: true, removeOnFail: true },
      },
    );
  }

  async unplan(monitorId: string): Promise<void> {
    await this.queue.removeJobScheduler(monitorId);
  }

  /**
   * Makes Redis's schedulers match the database: a missing one (Redis lost it) or one of another
   * interval is upserted, one without an active monitor removed. Schedulers that match are left
   * alone: upserting one again would start a tick at once.
   */
  async reconcile(): Promise<{ planned: number; removed: number }> {
    // Redis first: a monitor created (and planned) after this read is neither in the list nor
    // removed; read the other way round, its new scheduler would look unwanted and go.
    const schedulers = await this.queue.getJobSchedulers(0, -1);
    const active = await this.deps.monitors.active();
    const existing = new Map(schedulers.map((scheduler) => [scheduler.key, scheduler]));
    let planned = 0;
    let removed = 0;
    for (const monitor of active) {
      if (existing.get(monitor.id)?.every === monitor.intervalSeconds * 1_000) continue;
      await this.plan(monitor);
      planned += 1;
    }
    const wanted = new Set(active.map((monitor) => monitor.id));
    for (const scheduler of schedulers) {
      if (wanted.has(scheduler.key)) continue;
      await this.unplan(scheduler.key);
      removed += 1;
    }
    if (planned > 0 || removed > 0) this.deps.logger.info({ planned, removed }, 'monitor schedules rebuilt from the database');
    return { planned, removed };
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

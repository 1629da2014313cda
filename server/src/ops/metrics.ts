import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FairShareSnapshot } from '../capture/pool/fair-scheduler.js';
import { ignoreBecause } from '../ignore-error.js';

/** The buckets of daguerre_organizations_by_queue_depth; every bucket is always reported (0 when empty). */
export function queueDepthBuckets(depths: number[]): Record<'1' | '2-4' | '5+', number> {
  const counts = { '1': 0, '2-4': 0, '5+': 0 };
  for (const depth of depths) {
    if (depth >= 5) counts['5+'] += 1;
    else if (depth >= 2) counts['2-4'] += 1;
    else if (depth === 1) counts['1'] += 1;
  }
  return counts;
}

/** Async capture jobs by what they wait for. */
export interface JobBacklog {
  waiting: number;
  active: number;
}

/**
 * Every metric of the service, on a registry of its own (several runtimes in one test process
 * must not share counters). Names follow Prometheus conventions, prefixed `daguerre_`.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly captures = new Counter({
    name: 'daguerre_captures_total',
    help: 'Capture requests by outcome status code, format and cache result',
    labelNames: ['status', 'format', 'cache'] as const,
    registers: [this.registry],
  });

  readonly stageSeconds = new Histogram({
    name: 'daguerre_capture_stage_seconds',
    help: 'Time spent per capture stage (queue, setup, navigate, wait, capture, upload, ai)',
    labelNames: ['stage'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly captureSeconds = new Histogram({
    name: 'daguerre_capture_duration_seconds',
    help: 'End-to-end capture time by format',
    labelNames: ['format'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32],
    registers: [this.registry],
  });

  readonly queueDepth = new Gauge({
    name: 'daguerre_queue_depth',
    help: 'Captures waiting for a browser slot',
    registers: [this.registry],
  });
  readonly busySlots = new Gauge({ name: 'daguerre_busy_slots', help: 'Browser slots rendering now', registers: [this.registry] });
  readonly browserRestarts = new Gauge({
    name: 'daguerre_browser_restarts_total',
    help: 'Browser recycles since start',
    registers: [this.registry],
  });
  readonly browserCrashes = new Gauge({
    name: 'daguerre_browser_crashes_total',
    help: 'Browser crashes/disconnects since start',
    registers: [this.registry],
  });
  readonly memoryKills = new Gauge({
    name: 'daguerre_renderer_memory_kills_total',
    help: 'Chromium processes ended past RENDERER_MEMORY_LIMIT_MB since start',
    registers: [this.registry],
  });

  readonly creditsCharged = new Counter({
    name: 'daguerre_credits_charged_total',
    help: 'Credits charged for successful captures',
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'daguerre_rate_limit_rejections_total',
    help: 'Capture requests refused with 429',
    registers: [this.registry],
  });
  readonly renderErrors = new Counter({
    name: 'daguerre_render_errors_total',
    help: 'Failed captures by error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  /** Fair share (docs/render-slots.md): per-organization queues shown without naming any organization. */
  private fairShare: (() => FairShareSnapshot) | undefined;
  readonly waitingOrganizations: Gauge = new Gauge({
    name: 'daguerre_waiting_organizations',
    help: 'Organizations with at least one capture waiting for a browser slot',
    registers: [this.registry],
    collect: (): void => this.waitingOrganizations.set(this.fairShare?.().waitingOrganizations ?? 0),
  });
  readonly longestOrganizationQueue: Gauge = new Gauge({
    name: 'daguerre_longest_organization_queue',
    help: 'Captures waiting in the longest per-organization queue',
    registers: [this.registry],
    collect: (): void => this.longestOrganizationQueue.set(this.fairShare?.().longestOrganizationQueue ?? 0),
  });

  /** Waiting organizations counted by the length of their queue: a distribution, never a name or an id. */
  readonly organizationsByQueueDepth: Gauge<'depth'> = new Gauge({
    name: 'daguerre_organizations_by_queue_depth',
    help: 'Organizations with captures waiting for a browser slot, by how many wait (1, 2-4, 5+)',
    labelNames: ['depth'] as const,
    registers: [this.registry],
    collect: (): void => {
      const counts = queueDepthBuckets(this.fairShare?.().queueDepths ?? []);
      for (const [depth, count] of Object.entries(counts)) this.organizationsByQueueDepth.set({ depth }, count);
    },
  });
  readonly organizationsOverShare: Gauge = new Gauge({
    name: 'daguerre_organizations_over_share',
    help: "Organizations holding more browser slots than their plan's share (only while no one below their share waits)",
    registers: [this.registry],
    collect: (): void => this.organizationsOverShare.set(this.fairShare?.().organizationsOverShare ?? 0),
  });

  /**
   * Async jobs (docs/async-jobs.md), the signal to scale workers on: BullMQ keeps prioritized jobs
   * in a sorted set a KEDA list trigger cannot see, so the service counts them itself. From the
   * database, the same on every instance and worker, and true across a Redis restart.
   */
  private jobDepth: (() => Promise<{ queued: number; active: number; queueWaiting: number }>) | undefined;
  /** One reading per scrape for both gauges (prom-client collects them side by side). */
  private depthReading: { at: number; value: Promise<{ queued: number; active: number; queueWaiting: number } | undefined> } | undefined;
  private readDepth(): Promise<{ queued: number; active: number; queueWaiting: number } | undefined> {
    if (!this.jobDepth) return Promise.resolve(undefined);
    if (!this.depthReading || Date.now() - this.depthReading.at > 500) {
      this.depthReading = {
        at: Date.now(),
        value: this.jobDepth().catch(ignoreBecause('a database not answering leaves the gauges at their last values; /ready reports it')),
      };
    }
    return this.depthReading.value;
  }
  readonly asyncJobs: Gauge<'state'> = new Gauge({
    name: 'daguerre_async_jobs',
    help: 'Async capture jobs of the deployment by state: queued (waiting for a worker) or active (rendering)',
    labelNames: ['state'] as const,
    registers: [this.registry],
    collect: async (): Promise<void> => {
      const depth = await this.readDepth();
      if (!depth) return;
      this.asyncJobs.set({ state: 'queued' }, depth.queued);
      this.asyncJobs.set({ state: 'active' }, depth.active);
    },
  });
  readonly asyncQueueWaiting: Gauge = new Gauge({
    name: 'daguerre_async_queue_waiting',
    help: "Entries waiting in the BullMQ capture queue (wait + prioritized + delayed): Redis's own view",
    registers: [this.registry],
    collect: async (): Promise<void> => {
      const depth = await this.readDepth();
      if (depth) this.asyncQueueWaiting.set(depth.queueWaiting);
    },
  });

  observeJobs(depth: () => Promise<{ queued: number; active: number; queueWaiting: number }>): void {
    this.jobDepth = depth;
  }

  observeFairShare(snapshot: () => FairShareSnapshot): void {
    this.fairShare = snapshot;
  }

  /**
   * Async capture jobs waiting (plain, prioritized or delayed) or rendering, across every worker:
   * the figure KEDA scales workers on (docs/async-jobs.md). Read from the queue itself, because
   * BullMQ keeps prioritized jobs out of the `wait` list that KEDA's redis trigger counts.
   */
  private jobBacklog: (() => Promise<JobBacklog>) | undefined;
  /** One queue read serves the three gauges of a scrape (each collects on its own). */
  private backlogRead: { at: number; read: Promise<JobBacklog | undefined> } | undefined;
  private readBacklog(): Promise<JobBacklog | undefined> {
    const read = this.jobBacklog;
    if (!read) return Promise.resolve(undefined);
    if (!this.backlogRead || Date.now() - this.backlogRead.at > 1_000) {
      // Redis unreachable: undefined, and the gauges keep their last values; /ready and the logs report the outage.
      this.backlogRead = {
        at: Date.now(),
        read: read().catch(ignoreBecause('Redis unreachable: the gauges keep their last values; /ready and the logs report it')),
      };
    }
    return this.backlogRead.read;
  }
  readonly captureJobsWaiting: Gauge = new Gauge({
    name: 'daguerre_capture_jobs_waiting',
    help: 'Async capture jobs queued and not yet taken by a worker (all workers, read from the queue)',
    registers: [this.registry],
    collect: async (): Promise<void> => {
      const backlog = await this.readBacklog();
      if (backlog) this.captureJobsWaiting.set(backlog.waiting);
    },
  });
  readonly captureJobsActive: Gauge = new Gauge({
    name: 'daguerre_capture_jobs_active',
    help: 'Async capture jobs a worker is rendering now (all workers, read from the queue)',
    registers: [this.registry],
    collect: async (): Promise<void> => {
      const backlog = await this.readBacklog();
      if (backlog) this.captureJobsActive.set(backlog.active);
    },
  });
  readonly captureJobsBacklog: Gauge = new Gauge({
    name: 'daguerre_capture_jobs_backlog',
    help: 'Async capture jobs waiting plus rendering: what worker autoscaling divides by the jobs one worker renders at once',
    registers: [this.registry],
    collect: async (): Promise<void> => {
      const backlog = await this.readBacklog();
      if (backlog) this.captureJobsBacklog.set(backlog.waiting + backlog.active);
    },
  });

  observeJobBacklog(read: () => Promise<JobBacklog>): void {
    this.jobBacklog = read;
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'daguerre_process_' });
  }
}

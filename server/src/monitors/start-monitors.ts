import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ResultFiles } from '../jobs/result-files.js';
import type { WebhookQueue } from '../jobs/webhook-delivery.js';
import { assertUrlAllowed } from '../security/target-policy.js';
import type { CaptureService } from '../services/capture-service.js';
import type { DataLayer } from '../services/data-layer.js';
import type { RequestLog } from '../services/request-log.js';
import { MonitorRepository } from '../store/monitor-repository.js';
import { MonitorRunRepository } from '../store/monitor-run-repository.js';
import { MonitorAlerts } from './monitor-alerts.js';
import { MonitorCredits } from './monitor-credits.js';
import { MonitorRunner } from './monitor-runner.js';
import { MonitorSchedule } from './monitor-schedule.js';
import { MonitorService } from './monitor-service.js';
import { MonitorWorker } from './monitor-worker.js';
import type { MonitorRunImages } from './one-off-diff.js';

export interface MonitorsRuntime {
  /** The use cases behind /monitors (and the other faces); where the API runs. */
  service: MonitorService;
  schedule: MonitorSchedule;
  /** POST /diff's {runId} sides (one-off-diff.ts). */
  runImages: MonitorRunImages;
  /** Runs one monitor now (tests, the CLI); undefined where MONITOR_WORKERS is 0. */
  runner?: MonitorRunner;
  /** One pass of the upkeep: schedules rebuilt from the database, monitors paused for credits resumed where credits returned. */
  upkeep(): Promise<void>;
  /** Runs under way get `graceMs` to end; then they end uncharged, without an alert. */
  stop(graceMs: number): Promise<void>;
}

/**
 * Wires monitors for one process (runtime.ts calls it beside startJobs: monitors need REDIS_URL like jobs): the
 * schedule, the worker that runs ticks (MONITOR_WORKERS of them), and the upkeep every
 * MONITOR_RECONCILE_INTERVAL_MS on every process, so that whichever processes survive keep the
 * schedules of the database in Redis.
 */
export function startMonitors(
  config: Config,
  deps: {
    data: DataLayer;
    captures: CaptureService;
    webhooks: WebhookQueue;
    files: ResultFiles;
    /** The queue's connection (shared with the job queues) and a factory for the worker's own blocking one. */
    queueConnection: Redis;
    workerConnection: () => Redis;
    requestLog?: Pick<RequestLog, 'refused'>;
    logger: Logger;
  },
): MonitorsRuntime {
  const { data, logger, files } = deps;
  const monitors = new MonitorRepository(data.db);
  const runs = new MonitorRunRepository(data.db);
  const schedule = new MonitorSchedule(deps.queueConnection, { monitors, logger }, { prefix: config.JOB_QUEUE_PREFIX });
  const alerts = new MonitorAlerts(deps.webhooks, logger);
  const credits = new MonitorCredits(
    { monitors, credits: data.credits, schedule, alerts, logger },
    { creditsPerCapture: config.CREDITS_PER_CAPTURE },
  );
  const service = new MonitorService(
    {
      monitors,
      runs,
      files,
      schedule,
      credits: data.credits,
      captures: deps.captures,
      checkDestination: (field, url) => assertUrlAllowed(data.policy, data.resolve, field, url),
      logger,
    },
    {
      minIntervalSeconds: config.MONITOR_MIN_INTERVAL_SECONDS,
      defaultLimit: config.MONITORS_PER_ORGANIZATION,
      creditsPerCapture: config.CREDITS_PER_CAPTURE,
    },
  );
  let runner: MonitorRunner | undefined;
  let worker: MonitorWorker | undefined;
  let workerConnection: Redis | undefined;
  if (config.MONITOR_WORKERS > 0) {
    runner = new MonitorRunner(
      {
        monitors,
        runs,
        captures: deps.captures,
        ledger: data.credits,
        files,
        alerts,
        credits,
        logger,
        ...(deps.requestLog ? { requestLog: deps.requestLog } : {}),
      },
      { leaseMs: config.JOB_LOCK_MS, runsKept: config.MONITOR_RUNS_KEPT, creditsPerCapture: config.CREDITS_PER_CAPTURE },
    );
    workerConnection = deps.workerConnection();
    worker = new MonitorWorker(
      workerConnection,
      { runner, logger },
      {
        prefix: config.JOB_QUEUE_PREFIX,
        concurrency: config.MONITOR_WORKERS,
        perOrganization: config.MONITOR_MAX_PER_ORGANIZATION,
      },
    );
  }

  let running: Promise<void> | undefined;
  const upkeep = () =>
    (running ??= (async () => {
      try {
        await schedule.reconcile();
        await credits.resumeWhereCreditsReturned();
      } catch (error) {
        logger.warn({ err: error }, 'monitor upkeep failed; it runs again shortly');
      } finally {
        running = undefined;
      }
    })());
  // Not awaited: with Redis down at start-up BullMQ's commands wait for it, and the process must start
  // anyway. upkeep logs its own failure and never rejects.
  void upkeep();
  const timer = setInterval(() => void upkeep(), config.MONITOR_RECONCILE_INTERVAL_MS);
  timer.unref();

  return {
    service,
    schedule,
    runImages: { image: (organizationId, runId) => service.runImage(organizationId, runId) },
    ...(runner ? { runner } : {}),
    upkeep,
    async stop(graceMs: number) {
      clearInterval(timer);
      await running;
      const closing = worker?.close();
      await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
      runner?.abortAll();
      await closing;
      await schedule.close();
      workerConnection?.disconnect();
    },
  };
}

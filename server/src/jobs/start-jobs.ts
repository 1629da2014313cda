import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config.js';
import type { DataLayer } from '../services/data-layer.js';
import type { CaptureService } from '../services/capture-service.js';
import type { RequestLog } from '../services/request-log.js';
import type { WebhookOutcome } from '../store/job-record.js';
import { JobRepository } from '../store/job-repository.js';
import { BatchRepository } from '../store/batch-repository.js';
import { WebhookEventRepository } from '../store/webhook-event-repository.js';
import { CaptureBatches } from './capture-batches.js';
import { CaptureJobs } from './capture-jobs.js';
import { CaptureWorker } from './capture-worker.js';
import { JobAnnouncer } from './job-announcer.js';
import { JobWithdrawal } from './job-cancel.js';
import { JobUpkeep } from './job-upkeep.js';
import { commandConnection, jobConnection } from './redis-connection.js';
import { LocalResultFiles, S3ResultFiles, type ResultFiles } from './result-files.js';
import { WebhookQueue, WebhookWorker, type SigningSecretLookup } from './webhook-delivery.js';
import { WebhookHistory } from './webhook-history.js';
import { WebhookRecorder } from './webhook-recorder.js';
import { webhookSubjectOf } from './job-types.js';

/** `serve` takes requests (and renders jobs unless CAPTURE_WORKERS=0); `worker` only renders jobs. */
export type ProcessRole = 'serve' | 'worker';

export interface JobsRuntime {
  /** The API side; undefined without REDIS_URL or in a worker process. */
  jobs?: CaptureJobs;
  worker?: CaptureWorker;
  /** Bulk captures over the same queue (docs/bulk.md); the API side only where `jobs` is. */
  batches?: CaptureBatches;
  /** DELETE /captures/{jobId}; where `jobs` is. */
  withdrawal?: JobWithdrawal;
  /** Webhook events and attempts on record, and sending one again (docs/async-and-webhooks.md); where `jobs` is. */
  webhooks?: WebhookHistory;
  /** The job records (undefined without REDIS_URL). */
  repository?: JobRepository;
  /** Jobs waiting and running across the deployment, and BullMQ's own count of waiting entries: the scaling signal. */
  depth?: () => Promise<{ queued: number; active: number; queueWaiting: number }>;
  upkeep?: JobUpkeep;
  /** What other scheduled work shares with the jobs (monitors: docs/monitors.md); undefined without REDIS_URL. */
  queues?: SharedQueues;
  /** `companion` stops beside the capture worker, before the queues and their connections close. */
  stopAlongside(companion: { stop(graceMs: number): Promise<void> }): void;
  stop(graceMs: number): Promise<void>;
}

/** The queue side that monitors run on: its Redis, its webhook queue and its result files. */
export interface SharedQueues {
  webhooks: WebhookQueue;
  files: ResultFiles;
  /** The queue's connection, shared with the job queues. */
  queueConnection: Redis;
  /** A blocking connection of a worker's own, closed when the jobs stop. */
  workerConnection: () => Redis;
}

/** The deployment's bucket when RESULTS_S3_BUCKET is set, else the local results directory. */
export function resultFiles(config: Config): ResultFiles {
  if (config.RESULTS_S3_BUCKET) {
    return new S3ResultFiles({
      endpoint: config.RESULTS_S3_ENDPOINT!,
      bucket: config.RESULTS_S3_BUCKET,
      region: config.RESULTS_S3_REGION,
      accessKeyId: config.RESULTS_S3_ACCESS_KEY_ID!,
      secretAccessKey: config.RESULTS_S3_SECRET_ACCESS_KEY!,
      forcePathStyle: config.RESULTS_S3_PATH_STYLE,
      prefix: config.RESULTS_S3_PREFIX,
      requestTimeoutMs: config.STORAGE_REQUEST_TIMEOUT_MS,
    });
  }
  return new LocalResultFiles(config.RESULTS_DIR);
}

/**
 * Wires async captures for one process: the queue for the API, the capture worker and the
 * webhook worker where this process renders, and the upkeep (queue against records, retention)
 * everywhere. Without REDIS_URL a `serve` process runs as before (POST /captures answers 503); a
 * `worker` process refuses to start.
 */
export function startJobs(
  config: Config,
  role: ProcessRole,
  deps: {
    data: DataLayer;
    captures: CaptureService;
    secretFor: SigningSecretLookup;
    requestLog?: Pick<RequestLog, 'refused'>;
    logger: Logger;
  },
): JobsRuntime {
  const redisUrl = config.REDIS_URL;
  if (!redisUrl) {
    if (role === 'worker') throw new ConfigError('daguerre worker needs REDIS_URL: render workers take their jobs from a queue in Redis');
    return { stopAlongside: () => undefined, stop: async () => undefined };
  }
  const { data, captures, logger } = deps;
  const prefix = config.JOB_QUEUE_PREFIX;
  const ttl = config.JOB_RESULT_TTL_SECONDS;
  const webhookOptions = {
    prefix,
    retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retentionSeconds: ttl,
    concurrency: config.WEBHOOK_CONCURRENCY,
    perOrganization: config.WEBHOOK_MAX_PER_ORGANIZATION,
  };
  const repository = new JobRepository(data.db, data.credits);
  const files = resultFiles(config);
  const queueConnection = jobConnection(redisUrl);
  const commands = commandConnection(redisUrl);
  const connections = [queueConnection, commands];

  const jobs = new CaptureJobs(
    queueConnection,
    { repository, files, uploader: data.storage, configs: data.storageConfigs },
    { prefix, resultTtlSeconds: ttl },
  );
  const webhookEvents = new WebhookEventRepository(data.db);
  const recorder = new WebhookRecorder(webhookEvents, logger);
  const webhooks = new WebhookQueue(queueConnection, webhookOptions, recorder);
  const announcer = new JobAnnouncer(repository, webhooks, logger);
  const batchRecords = new BatchRepository(data.db);
  const withdrawal = new JobWithdrawal({ jobs, jobRecords: repository, announcer }, { resultTtlSeconds: ttl });
  const batches = new CaptureBatches(
    { jobs, batches: batchRecords, webhooks, announcer, withdrawal, logger },
    { checkIntervalMs: config.JOB_LOCK_MS, resultTtlSeconds: ttl },
  );
  const history = new WebhookHistory({ events: webhookEvents, webhooks, jobRecords: repository, batches: batchRecords, logger });
  announcer.onEnded((jobId) => batches.jobEnded(jobId));
  batches.start();
  const queues: SharedQueues = {
    webhooks,
    files,
    queueConnection,
    workerConnection: () => {
      const connection = jobConnection(redisUrl);
      connections.push(connection);
      return connection;
    },
  };
  const companions: { stop(graceMs: number): Promise<void> }[] = [];

  const concurrency = role === 'worker' ? Math.max(1, config.CAPTURE_WORKERS) : config.CAPTURE_WORKERS;
  let worker: CaptureWorker | undefined;
  let webhookWorker: WebhookWorker | undefined;
  if (concurrency > 0) {
    const workerConnection = jobConnection(redisUrl);
    const webhookConnection = jobConnection(redisUrl);
    connections.push(workerConnection, webhookConnection);
    worker = new CaptureWorker(
      workerConnection,
      {
        captures,
        credits: data.credits,
        repository,
        files,
        announcer,
        logger,
        ...(deps.requestLog ? { requestLog: deps.requestLog } : {}),
      },
      {
        prefix,
        concurrency,
        lockMs: config.JOB_LOCK_MS,
        maxAttempts: config.JOB_MAX_ATTEMPTS,
        resultTtlSeconds: ttl,
      },
    );
    // The message id says whose webhook it is.
    const ended = (outcome: WebhookOutcome) => async (messageId: string) => {
      const subject = webhookSubjectOf(messageId);
      if (subject && 'batchId' in subject) await batchRecords.markWebhookEnded(subject.batchId, outcome);
      else if (subject) await repository.markWebhookEnded(subject.jobId, outcome);
    };
    webhookWorker = new WebhookWorker(
      webhookConnection,
      {
        secretFor: deps.secretFor,
        policy: data.policy,
        resolve: data.resolve,
        logger,
        onDelivered: ended('delivered'),
        onGaveUp: ended('gave_up'),
        onAttempt: (delivery, outcome) => recorder.attempted(delivery, outcome),
      },
      webhookOptions,
    );
    logger.info({ concurrency, results: files.description }, 'capture worker started');
  }
  const upkeep = new JobUpkeep(
    { repository, batches: batchRecords, webhookEvents, queue: jobs.queue, commands, files, announcer, logger },
    { prefix, reconcileIntervalMs: config.JOB_LOCK_MS, sweepIntervalMs: config.RESULT_SWEEP_INTERVAL_MS, resultTtlSeconds: ttl },
  );
  upkeep.start();

  return {
    ...(role === 'serve' ? { jobs, batches, withdrawal, webhooks: history } : {}),
    ...(worker ? { worker } : {}),
    repository,
    upkeep,
    queues,
    stopAlongside: (companion) => void companions.push(companion),
    depth: async () => {
      const [records, counts] = await Promise.all([
        repository.counts(),
        jobs.queue.getJobCounts('wait', 'prioritized', 'delayed').catch(() => ({}) as Record<string, number>),
      ]);
      const queueWaiting = Object.values(counts).reduce((sum, n) => sum + (n ?? 0), 0);
      return { ...records, queueWaiting };
    },
    async stop(graceMs: number) {
      // Bounded: with Redis unreachable BullMQ's close would wait for a connection forever.
      const closing = (async () => {
        await upkeep.stop();
        batches.stop();
        await Promise.all([worker?.close(graceMs), ...companions.map((companion) => companion.stop(graceMs))]);
        await webhookWorker?.close();
        await webhooks.close();
        await jobs.close();
      })().catch((error: unknown) => logger.warn({ err: error }, 'closing the job queues failed'));
      await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, graceMs + 6_000).unref())]);
      for (const connection of connections) connection.disconnect();
    },
  };
}

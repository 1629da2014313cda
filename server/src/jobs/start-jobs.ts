import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config.js';
import type { DataLayer } from '../services/data-layer.js';
import type { CaptureService } from '../services/capture-service.js';
import { CaptureJobs } from './capture-jobs.js';
import { CaptureWorker } from './capture-worker.js';
import { commandConnection, jobConnection } from './redis-connection.js';
import { ResultStore } from './result-store.js';
import { WebhookQueue, WebhookWorker, type SigningSecretLookup } from './webhook-delivery.js';

/** `serve` takes requests (and renders jobs unless CAPTURE_WORKERS=0); `worker` only renders jobs. */
export type ProcessRole = 'serve' | 'worker';

export interface JobsRuntime {
  /** The API side; undefined without REDIS_URL or in a worker process. */
  jobs?: CaptureJobs;
  worker?: CaptureWorker;
  stop(graceMs: number): Promise<void>;
}

/**
 * Wires async captures for one process: the queue for the API, the capture worker and the
 * webhook worker where this process renders. Without REDIS_URL a `serve` process runs as before
 * (POST /captures answers 503); a `worker` process refuses to start.
 */
export function startJobs(
  config: Config,
  role: ProcessRole,
  deps: { data: DataLayer; captures: CaptureService; secretFor: SigningSecretLookup; logger: Logger },
): JobsRuntime {
  const redisUrl = config.REDIS_URL;
  if (!redisUrl) {
    if (role === 'worker') throw new ConfigError('rendershot worker needs REDIS_URL: render workers take their jobs from a queue in Redis');
    return { stop: async () => undefined };
  }
  const { data, captures, logger } = deps;
  const prefix = config.JOB_QUEUE_PREFIX;
  const webhookOptions = { prefix, retryBaseMs: config.WEBHOOK_RETRY_BASE_MS, timeoutMs: config.WEBHOOK_TIMEOUT_MS, retentionSeconds: config.JOB_RESULT_TTL_SECONDS };
  const connections = [jobConnection(redisUrl)];
  const queueConnection = connections[0]!;

  const jobs =
    role === 'serve'
      ? new CaptureJobs(queueConnection, commandConnection(redisUrl), { uploader: data.storage, configs: data.storageConfigs }, {
          prefix,
          resultTtlSeconds: config.JOB_RESULT_TTL_SECONDS,
        })
      : undefined;

  const concurrency = role === 'worker' ? Math.max(1, config.CAPTURE_WORKERS) : config.CAPTURE_WORKERS;
  let worker: CaptureWorker | undefined;
  let webhookWorker: WebhookWorker | undefined;
  let webhooks: WebhookQueue | undefined;
  let results: ResultStore | undefined;
  const resultsConnection = commandConnection(redisUrl);
  if (concurrency > 0) {
    webhooks = new WebhookQueue(queueConnection, webhookOptions);
    results = new ResultStore(resultsConnection, prefix, config.JOB_RESULT_TTL_SECONDS);
    const workerConnection = jobConnection(redisUrl);
    const webhookConnection = jobConnection(redisUrl);
    connections.push(workerConnection, webhookConnection);
    worker = new CaptureWorker(workerConnection, { captures, credits: data.credits, results, webhooks, logger }, {
      prefix,
      concurrency,
      lockMs: config.JOB_LOCK_MS,
    });
    webhookWorker = new WebhookWorker(webhookConnection, { secretFor: deps.secretFor, policy: data.policy, resolve: data.resolve, logger }, webhookOptions);
    logger.info({ concurrency }, 'capture worker started');
  }

  return {
    ...(jobs ? { jobs } : {}),
    ...(worker ? { worker } : {}),
    async stop(graceMs: number) {
      // Bounded: with Redis unreachable BullMQ's close would wait for a connection forever.
      const closing = (async () => {
        await worker?.close(graceMs);
        await webhookWorker?.close();
        await webhooks?.close();
        await jobs?.close();
      })().catch((error: unknown) => logger.warn({ err: error }, 'closing the job queues failed'));
      await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, graceMs + 2_000).unref())]);
      resultsConnection.disconnect();
      for (const connection of connections) connection.disconnect();
    },
  };
}

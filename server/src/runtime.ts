import type { Server } from 'node:http';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { configNotices, type Config } from './config.js';
import type { BrowserManager } from './capture/browser/browser-manager.js';
import { startBrowserSide, type BrowserSide } from './capture/browser/browser-start.js';
import type { RendererMemoryWatchdog } from './capture/browser/renderer-memory-watchdog.js';
import { ContentFilters } from './capture/page/content-filters/index.js';
import type { ContextPool } from './capture/pool/context-pool.js';
import { removeDeadInstancesVideoFolders } from './capture/output/video-encoder.js';
import { mountOpsRoutes } from './http/ops-routes.js';
import { Metrics } from './ops/metrics.js';
import { jobBacklog } from './ops/job-backlog.js';
import { createHttpServer } from './http/http-server.js';
import { startMetricsServer } from './http/metrics-server.js';
import { createWorkerApp } from './http/worker-app.js';
import { startJobs, type JobsRuntime, type ProcessRole } from './jobs/start-jobs.js';
import { startMonitors, type MonitorsRuntime } from './monitors/start-monitors.js';
import type { SigningSecretLookup } from './jobs/webhook-delivery.js';
import { createLogger } from './logger.js';
import { adoptLegacyQueuePrefix, legacyQueueExists } from './legacy-names.js';
import { CAPTURE_QUEUE } from './jobs/job-types.js';
import type { EgressProxy } from './security/egress-proxy.js';
import type { Resolver } from './security/resolver.js';
import type { CaptureService } from './services/capture-service.js';
import { ResponseCache } from './services/response-cache.js';
import { openDataLayer, type DataLayer } from './services/data-layer.js';
import { egressPolicy } from './security/address-policy.js';
import { ignoreBecause } from './ignore-error.js';
import { buildCaptureService } from './runtime/capture-service.js';
import { listenOn } from './runtime/listen.js';
import { openRateLimitStore } from './runtime/rate-limit-store.js';
import { startRenderSide } from './runtime/render-side.js';
import { gracefulStop } from './runtime/shutdown.js';
import { startSweepers } from './runtime/sweepers.js';

export { egressPolicy, openDataLayer, type DataLayer };

export interface Runtime extends DataLayer {
  config: Config;
  egress: EgressProxy;
  metrics: Metrics;
  /** Where /metrics is served when METRICS_PORT is set. */
  metricsUrl?: string;
  logger: Logger;
  app: Express;
  server: Server;
  browser: BrowserManager;
  /** Ends Chromium processes past RENDERER_MEMORY_LIMIT_MB (docs/containment.md). */
  memoryWatchdog: RendererMemoryWatchdog;
  pool: ContextPool;
  captures: CaptureService;
  cache: ResponseCache;
  /** Async captures: the queue (serve) and the render worker (unless CAPTURE_WORKERS=0). */
  jobs: JobsRuntime;
  /** Scheduled captures with diffs; undefined without REDIS_URL. */
  monitors?: MonitorsRuntime;
  url: string;
  stop(): Promise<void>;
}

export interface RuntimeOptions {
  logger?: Logger;
  resolver?: Resolver;
  /** `serve` (default): API, dashboard and a worker; `worker`: a render worker with health and metrics only. */
  role?: ProcessRole;
  /** How webhooks find the signing secret of the key that queued a job. */
  secretFor?: SigningSecretLookup;
  /** Chromium's side, already launching (the CLI starts it before it loads this module); else started here. */
  browserSide?: BrowserSide;
}

/** Builds and starts the whole service: database, browser pool, HTTP server. */
export async function startRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const role = options.role ?? 'serve';
  const logger = options.logger ?? createLogger(config.LOG_LEVEL);
  for (const notice of configNotices(config)) logger.warn(notice);
  // A deployment from before the rename keeps its job queue (legacy-names.ts).
  const adoptedQueue = await adoptLegacyQueuePrefix(config, process.env, () => legacyQueueExists(config.REDIS_URL!, CAPTURE_QUEUE));
  if (adoptedQueue.notice) logger.warn(adoptedQueue.notice);
  config = adoptedQueue.config;
  // Chromium's launch first: it runs while the database migrates and the rest starts (browser-start.ts).
  const browserSide = options.browserSide ?? (await startBrowserSide(config, logger, options.resolver));
  const { egress, browser, sandbox } = browserSide;
  // Temporary folders of video encodings whose process died (killed while it encoded), never a live process's.
  const videoFolders = removeDeadInstancesVideoFolders();
  if (videoFolders.length > 0) logger.info({ folders: videoFolders }, 'removed the video temporary folders of processes that are gone');
  // The filter engines load in the background (from their prepared form or cache): start-up does not wait.
  const contentFilters = new ContentFilters({ logger });
  // warm() never rejects: a list that fails is logged, and the next capture that needs it tries again.
  void contentFilters.warm();
  let data: DataLayer;
  try {
    data = await openDataLayer(config, browserSide.resolve, browserSide.policy);
  } catch (error) {
    await browserSide.close();
    throw error;
  }
  try {
    const { sweeper, requestLog } = await startSweepers(config, data, logger);
    const { memoryWatchdog, pool, warming, scheduler, renderer } = startRenderSide(config, browserSide, logger);
    const cache = new ResponseCache(config.CACHE_MAX_BYTES);
    const { store, redis } = await openRateLimitStore(config, data);
    const { submission, captures } = buildCaptureService(config, { data, logger, renderer, scheduler, cache, contentFilters, redis });
    const jobs = startJobs(config, role, {
      data,
      captures,
      secretFor: options.secretFor ?? ((keyId) => data.signingSecrets.signingSecretFor(keyId)),
      requestLog,
      logger,
    });
    // Monitors run on the jobs' Redis and webhook queue (docs/monitors.md), and stop with their worker.
    const monitors = jobs.queues ? startMonitors(config, { data, captures, ...jobs.queues, requestLog, logger }) : undefined;
    if (monitors) jobs.stopAlongside(monitors);
    // A browser that cannot start fails the start, as before; the queue's workers stop first.
    await warming.catch(async (error: unknown) => {
      await jobs.stop(0);
      throw error;
    });
    const metrics = new Metrics();
    metrics.observeFairShare(() => scheduler.snapshot());
    const queue = jobs.jobs?.queue;
    if (queue) metrics.observeJobBacklog(() => jobBacklog(queue));
    if (jobs.depth) metrics.observeJobs(jobs.depth);
    const opsExtras = {
      scheduled: () => scheduler.snapshot().waiting,
      ...(config.METRICS_TOKEN ? { metricsToken: config.METRICS_TOKEN } : {}),
      metricsElsewhere: config.METRICS_PORT !== undefined,
      memoryKills: () => memoryWatchdog.killCount,
      logger,
    };
    // Aborted when a shutdown's grace period ends: captures still running then fail and release their credits.
    const shutdown = new AbortController();
    let accepting = true;
    const mountOps = (expressApp: Express) =>
      mountOpsRoutes(expressApp, { db: data.db, browser, pool, metrics, sandbox, accepting: () => accepting, ...opsExtras });
    // A worker loads none of the API's modules (routes, MCP, dashboard): it starts sooner (docs/scaling.md).
    const { app, inFlight } =
      role === 'worker'
        ? { app: createWorkerApp(mountOps, logger), inFlight: undefined }
        : (await import('./api-wiring.js')).buildApiApp({
            config,
            data,
            logger,
            metrics,
            captures,
            submission,
            requestLog,
            jobs,
            monitors,
            rateLimitStore: store,
            shutdownSignal: shutdown.signal,
            mountOps,
          });
    const server = createHttpServer(app);
    const url = await listenOn(server, config, role);
    const metricsServer =
      config.METRICS_PORT !== undefined
        ? await startMetricsServer(config.METRICS_PORT, config.METRICS_HOST, {
            db: data.db,
            browser,
            pool,
            metrics,
            accepting: () => accepting,
            ...opsExtras,
          })
        : undefined;
    const stop = gracefulStop({
      config,
      stopAccepting: () => {
        accepting = false;
      },
      metricsServer,
      jobs,
      server,
      shutdown,
      inFlight,
      sweeper,
      requestLog,
      pool,
      memoryWatchdog,
      browser,
      egress,
      redis,
      db: data.db,
    });
    return {
      ...data,
      config,
      egress,
      logger,
      metrics,
      ...(metricsServer ? { metricsUrl: metricsServer.url } : {}),
      app,
      server,
      browser,
      memoryWatchdog,
      pool,
      captures,
      cache,
      jobs,
      monitors,
      url,
      stop,
    };
  } catch (error) {
    // A failed start closes the database (better-sqlite3's statements left open abort Node 24 at exit) and Chromium.
    await data.db.close().catch(ignoreBecause('the failed start is the error thrown'));
    await browserSide.close().catch(ignoreBecause('the failed start is the error thrown'));
    throw error;
  }
}

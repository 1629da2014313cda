import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { maxCaptureBudgetMs } from '@daguerre/contract';
import { configNotices, type Config } from './config.js';
import type { BrowserManager } from './capture/browser/browser-manager.js';
import { startBrowserSide, type BrowserSide } from './capture/browser/browser-start.js';
import { MemoryCgroups } from './capture/browser/renderer-memory-cgroup.js';
import { pageMemoryLimit, RendererMemoryWatchdog } from './capture/browser/renderer-memory-watchdog.js';
import { ContentFilters } from './capture/page/content-filters/index.js';
import { ContextPool } from './capture/pool/context-pool.js';
import { FairScheduler } from './capture/pool/fair-scheduler.js';
import { Renderer } from './capture/renderer.js';
import { CaptureLanes } from './capture/pool/capture-lanes.js';
import { removeDeadInstancesVideoFolders } from './capture/output/video-encoder.js';
import { mountOpsRoutes } from './http/ops-routes.js';
import { Metrics } from './ops/metrics.js';
import { jobBacklog } from './ops/job-backlog.js';
import { createHttpServer } from './http/http-server.js';
import { startMetricsServer } from './http/metrics-server.js';
import { createWorkerApp } from './http/worker-app.js';
import { startJobs, type JobsRuntime, type ProcessRole } from './jobs/start-jobs.js';
import { startMonitors, type MonitorsRuntime } from './monitors/start-monitors.js';
import { closePixelDiff } from './monitors/pixel-diff.js';
import type { SigningSecretLookup } from './jobs/webhook-delivery.js';
import type { RateLimitStore } from './http/rate-limit.js';
import { createLogger } from './logger.js';
import { adoptLegacyQueuePrefix, legacyQueueExists } from './legacy-names.js';
import { CAPTURE_QUEUE } from './jobs/job-types.js';
import type { EgressProxy } from './security/egress-proxy.js';
import { assertUrlAllowed } from './security/target-policy.js';
import type { Resolver } from './security/resolver.js';
import { AiAnalyzer } from './services/ai-analysis.js';
import { schemaChecker } from './services/ai-schema.js';
import { CaptureService } from './services/capture-service.js';
import { CaptureSubmission } from './services/capture-submission.js';
import { ConcurrencyGate, defaultConcurrentCaptures } from './services/concurrency-gate.js';
import { RedisCapturePlaces } from './services/shared-capture-places.js';
import { CreditSweeper } from './services/credit-sweeper.js';
import { RequestLog } from './services/request-log.js';
import { RequestLogRepository } from './store/request-log-repository.js';
import { ResponseCache } from './services/response-cache.js';
import { openDataLayer, type DataLayer } from './services/data-layer.js';
import { egressPolicy } from './security/address-policy.js';
import { ignoreBecause } from './ignore-error.js';

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

function rateLimitStore(config: Config, data: DataLayer): { store: RateLimitStore; redis?: Redis } {
  if (config.REDIS_URL) {
    const redis = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
    // It reconnects by itself; requests meanwhile fail closed (503). Without a listener every refused
    // reconnection would print "Unhandled error event" while Redis is down.
    redis.on('error', () => undefined);
    return { store: { kind: 'redis', client: redis }, redis };
  }
  if (data.db.dialect === 'mysql') {
    const databaseName = new URL(config.DATABASE_URL).pathname.replace(/^\//, '') || 'daguerre';
    return { store: { kind: 'mysql', db: data.db, databaseName } };
  }
  return { store: { kind: 'memory' } };
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
    // A reservation older than the deadline plus a margin (for the upload and the commit) belongs to
    // no live capture on any instance: each instance sweeps them at start-up and then on a timer.
    const sweeper = new CreditSweeper(data.credits, {
      marginMs: config.STALE_RESERVATION_MARGIN_MS,
      staleAfterMs: maxCaptureBudgetMs(config.CAPTURE_TIMEOUT_MS) + config.STALE_RESERVATION_MARGIN_MS,
      intervalMs: config.CREDIT_SWEEP_INTERVAL_MS,
      logger,
    });
    await sweeper.sweep();
    sweeper.start();
    const requestLog = new RequestLog(new RequestLogRepository(data.db), {
      retentionDays: config.REQUEST_LOG_RETENTION_DAYS,
      refusalsPerMinute: config.REQUEST_LOG_REFUSALS_PER_MINUTE,
      sweepIntervalMs: config.REQUEST_LOG_SWEEP_INTERVAL_MS,
      logger,
    });
    requestLog.start();

    // All of a renderer's memory, not only its JS heap, has a limit (docs/containment.md).
    const cgroups = MemoryCgroups.open();
    const memoryWatchdog = new RendererMemoryWatchdog({
      limitBytes: config.RENDERER_MEMORY_LIMIT_MB * 1024 ** 2,
      roots: () => browser.pids(),
      logger,
      ...(cgroups ? { cgroups } : {}),
    });
    memoryWatchdog.start();
    logger.info(
      { limitMb: config.RENDERER_MEMORY_LIMIT_MB, kernelHold: memoryWatchdog.kernelHold, renderSlots: config.MAX_CONCURRENCY },
      'renderer memory limit and render slots (MAX_CONCURRENCY)',
    );
    const pool = new ContextPool(browser, {
      size: config.MAX_CONCURRENCY,
      maxQueue: config.MAX_QUEUE,
      reuseLimit: config.CONTEXT_REUSE_LIMIT,
      spares: config.SPARE_CONTEXTS,
      warmContexts: config.WARM_CONTEXTS,
      rendererReuseLimit: config.RENDERER_REUSE_LIMIT,
      rendererGcEvery: config.RENDERER_GC_EVERY,
      logger,
    });
    // The first contexts open while the rest starts; a job taken before they are ready opens its own.
    const warming = pool.warm();
    // Same concurrency as the pool, so the pool's own queue stays empty and the order is the scheduler's.
    const scheduler = new FairScheduler({
      concurrency: config.MAX_CONCURRENCY,
      maxQueue: config.MAX_QUEUE,
      maxOrgShare: config.MAX_ORG_SHARE_PERCENT / 100,
    });
    const renderer = new Renderer(pool, browser, {
      openProxyChain: (upstream) => egress.openChain(upstream),
      wasRefused: (url) => egress.refusedRecently(url),
      connectionFailure: (url) => egress.failureOf(url),
      fullPageBudget: { maxHeightPx: config.FULL_PAGE_MAX_HEIGHT_PX, maxPixels: config.FULL_PAGE_MAX_PIXELS },
      unresponsiveTimeoutMs: config.PAGE_UNRESPONSIVE_TIMEOUT_MS,
      explainCrash: () => (memoryWatchdog.claim() ? pageMemoryLimit(memoryWatchdog.limitBytes) : undefined),
      video: { ffmpegPath: config.FFMPEG_PATH, maxBytes: config.VIDEO_MAX_BYTES },
    });
    const cache = new ResponseCache(config.CACHE_MAX_BYTES);
    const { store, redis } = rateLimitStore(config, data);
    // The limiter's client queues nothing while offline (fail closed): let it connect before the first request.
    // It also counts the plans' concurrent captures across instances (shared-capture-places.ts).
    if (redis && redis.status !== 'ready') {
      await new Promise<void>((resolve) => {
        const done = () => resolve();
        redis.once('ready', done);
        setTimeout(() => {
          redis.off('ready', done);
          resolve();
        }, 5_000).unref();
      });
    }
    const lanes = new CaptureLanes({
      renderSlots: config.MAX_CONCURRENCY,
      videoSlots: config.VIDEO_CONCURRENCY,
      maxOrgSharePercent: config.MAX_ORG_SHARE_PERCENT,
    });
    // Acceptance (checks, credits) for /capture, POST /captures and bulk alike; the queues join once they exist.
    const submission = new CaptureSubmission({
      credits: data.credits,
      creditsPerCapture: config.CREDITS_PER_CAPTURE,
      checkDestination: (field, url) => assertUrlAllowed(data.policy, data.resolve, field, url),
    });
    const captures = new CaptureService(
      {
        renderer,
        scheduler,
        credits: data.credits,
        cache,
        storage: data.storage,
        storageConfigs: data.storageConfigs,
        ai: new AiAnalyzer({
          ...(config.OPENAI_BASE_URL ? { baseUrl: config.OPENAI_BASE_URL } : {}),
          model: config.OPENAI_MODEL,
          timeoutMs: config.OPENAI_TIMEOUT_MS,
        }),
        logger,
        submission,
        contentFilters,
        lanes,
        // Without a limit of the operator's (ORG_MAX_CONCURRENT_CAPTURES 0), only plans that set one are gated:
        // an organization alone filling the instance then gets the queue's own 503, which is what it is.
        concurrency: new ConcurrencyGate(
          config.ORG_MAX_CONCURRENT_CAPTURES > 0 ? defaultConcurrentCaptures(config) : Number.POSITIVE_INFINITY,
          redis ? new RedisCapturePlaces(redis, config.JOB_QUEUE_PREFIX, logger) : undefined,
        ),
      },
      { captureTimeoutMs: config.CAPTURE_TIMEOUT_MS },
    );
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
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(role === 'worker' ? config.WORKER_PORT : config.PORT, config.HOST, () => resolve());
    });
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
    const address = server.address() as AddressInfo;
    // The address this machine reaches the server at: loopback for a wildcard, IPv6 in brackets.
    const host =
      config.HOST === '0.0.0.0'
        ? '127.0.0.1'
        : config.HOST === '::'
          ? '[::1]'
          : config.HOST.includes(':')
            ? `[${config.HOST}]`
            : config.HOST;
    const url = `http://${host}:${address.port}`;

    let stopping: Promise<void> | undefined;
    /**
     * Graceful shutdown: /ready turns 503, no new connections are accepted, in-flight captures get
     * SHUTDOWN_TIMEOUT_MS to finish; the rest are aborted (their credits released), then the browser
     * (every Chromium process) and the database are closed.
     */
    const stop = () =>
      (stopping ??= (async () => {
        accepting = false;
        await metricsServer?.close();
        // Workers stop taking jobs now; the ones rendering get the same grace period as requests.
        const jobsStopped = jobs.stop(config.SHUTDOWN_TIMEOUT_MS);
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Keep-alive connections become idle as their last response ends: close them as they do.
        const reaper = setInterval(() => server.closeIdleConnections(), 100);
        server.closeIdleConnections();
        const grace = new Promise<void>((resolve) => setTimeout(resolve, config.SHUTDOWN_TIMEOUT_MS).unref());
        await Promise.race([closed, grace]);
        clearInterval(reaper);
        // Jobs still rendering after the grace period are left to other workers (stalled-job recovery).
        await jobsStopped;
        shutdown.abort();
        // Aborted captures release their reservations and write their 503 before connections close.
        if (inFlight) await Promise.race([inFlight.settled(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
        server.closeAllConnections();
        await closed;
        await sweeper.stop();
        await requestLog.stop();
        await pool.close();
        await schemaChecker.close();
        await closePixelDiff();
        memoryWatchdog.stop();
        await browser.close();
        memoryWatchdog.close();
        await egress.stop();
        redis?.disconnect();
        await data.db.close();
      })());
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

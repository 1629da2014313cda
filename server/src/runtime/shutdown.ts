import type { Server } from 'node:http';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import type { BrowserManager } from '../capture/browser/browser-manager.js';
import type { RendererMemoryWatchdog } from '../capture/browser/renderer-memory-watchdog.js';
import type { ContextPool } from '../capture/pool/context-pool.js';
import type { InFlight } from '../http/capture-routes.js';
import type { JobsRuntime } from '../jobs/start-jobs.js';
import { closePixelDiff } from '../monitors/pixel-diff.js';
import type { EgressProxy } from '../security/egress-proxy.js';
import { schemaChecker } from '../services/ai-schema.js';
import type { CreditSweeper } from '../services/credit-sweeper.js';
import type { DataLayer } from '../services/data-layer.js';
import type { RequestLog } from '../services/request-log.js';

/** What a shutdown stops, in the order it stops them. */
export interface ShutdownParts {
  config: Config;
  /** Turns /ready to 503. */
  stopAccepting: () => void;
  metricsServer: { close: () => Promise<void> } | undefined;
  jobs: JobsRuntime;
  server: Server;
  /** Aborted when the grace period ends: captures still running then fail and release their credits. */
  shutdown: AbortController;
  /** The API's captures in flight (none in a worker). */
  inFlight: Pick<InFlight, 'settled'> | undefined;
  sweeper: CreditSweeper;
  requestLog: RequestLog;
  pool: ContextPool;
  memoryWatchdog: RendererMemoryWatchdog;
  browser: BrowserManager;
  egress: EgressProxy;
  redis: Redis | undefined;
  db: DataLayer['db'];
}

/**
 * Graceful shutdown: /ready turns 503, no new connections are accepted, in-flight captures get
 * SHUTDOWN_TIMEOUT_MS to finish; the rest are aborted (their credits released), then the browser
 * (every Chromium process) and the database are closed. Called twice, it returns the same promise.
 */
export function gracefulStop(parts: ShutdownParts): () => Promise<void> {
  const { config, metricsServer, jobs, server, shutdown, inFlight, sweeper, requestLog, pool, memoryWatchdog, browser, egress, redis, db } =
    parts;
  let stopping: Promise<void> | undefined;
  return () =>
    (stopping ??= (async () => {
      parts.stopAccepting();
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
      await db.close();
    })());
}

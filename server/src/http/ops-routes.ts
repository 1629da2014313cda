import { createHash, timingSafeEqual } from 'node:crypto';
import type { Express, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { BrowserManager } from '../capture/browser/browser-manager.js';
import type { ContextPool } from '../capture/pool/context-pool.js';
import type { SandboxStatus } from '../capture/browser/sandbox-check.js';
import type { Metrics } from '../ops/metrics.js';
import { handle } from '../async-handler.js';
import type { Knex } from 'knex';

export interface OpsDependencies {
  /** /ready asks the database a `select 1` (store/database.ts's Database fits). */
  db: { knex: Pick<Knex, 'raw'> };
  browser: BrowserManager;
  pool: ContextPool;
  metrics: Metrics;
  /** How Chromium runs: sandboxed, or not by the operator's opt-out (docs/security.md). */
  sandbox?: SandboxStatus;
  /** False once shutdown has begun: load balancers stop sending traffic. */
  accepting: () => boolean;
  /** Captures waiting in the fair scheduler, in front of the pool (docs/render-slots.md). */
  scheduled?: () => number;
  /** METRICS_TOKEN: when set, /metrics answers only `Authorization: Bearer <token>` (docs/deploy.md). */
  metricsToken?: string;
  /** True when /metrics is served on METRICS_PORT instead of the API port. */
  metricsElsewhere?: boolean;
  /** Chromium processes the memory watchdog ended (docs/containment.md). */
  memoryKills?: () => number;
  /** Where a failed readiness check's detail goes (never into the public answer). */
  logger?: Logger;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Compares digests, so that neither the length nor the content leaks through timing. */
function bearerMatches(req: Request, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const presented = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
  return timingSafeEqual(digest(presented), digest(token));
}

/**
 * Runs a check for /ready. /ready is public: a failure says which check failed and nothing of why,
 * since a driver's message names internal hosts and ports (`connect ECONNREFUSED 10.0.3.7:3306`);
 * the detail goes to the log.
 */
async function timed<T>(name: string, check: () => Promise<T>, logger?: Logger): Promise<{ ok: boolean; ms: number; error?: string }> {
  const started = Date.now();
  try {
    await check();
    return { ok: true, ms: Date.now() - started };
  } catch (error) {
    logger?.warn({ err: error, check: name }, 'readiness check failed');
    return { ok: false, ms: Date.now() - started, error: `the ${name} does not answer` };
  }
}

/** `/health` (the process answers), `/ready` (it can take captures now) and `/metrics` (Prometheus). */
export function mountOpsRoutes(app: Express, deps: OpsDependencies): void {
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok', uptimeSeconds: Math.round(process.uptime()) });
  });

  app.get(
    '/ready',
    handle(async (_req, res) => {
      const [database, browser] = await Promise.all([
        timed('database', () => deps.db.knex.raw('select 1'), deps.logger),
        timed(
          'browser',
          async () => {
            if (!(await deps.browser.healthy())) throw new Error('browser does not answer');
          },
          deps.logger,
        ),
      ]);
      const waiting = deps.pool.waiting + (deps.scheduled?.() ?? 0);
      const saturated = waiting >= deps.pool.maxQueue && deps.pool.maxQueue > 0;
      const queue = { ok: !saturated, waiting, busy: deps.pool.busy, slots: deps.pool.size };
      const shutdown = { ok: deps.accepting() };
      const ready = database.ok && browser.ok && queue.ok && shutdown.ok;
      // The sandbox does not change readiness; an operator's opt-out stays visible here (docs/security.md).
      const sandbox = { ok: true, ...(deps.sandbox ?? { mode: 'on' as const }) };
      res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unready', checks: { database, browser, queue, shutdown, sandbox } });
    }),
  );

  // METRICS_PORT moves /metrics off the public port (docs/reference/configuration.md).
  if (!deps.metricsElsewhere) app.get('/metrics', metricsHandler(deps));
}

/** Prometheus text; with METRICS_TOKEN, only for `Authorization: Bearer <token>`. */
export function metricsHandler(deps: OpsDependencies): RequestHandler {
  return handle(async (req: Request, res: Response): Promise<void> => {
    if (deps.metricsToken !== undefined && !bearerMatches(req, deps.metricsToken)) {
      res.status(401).setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      res.json({ success: false, error: { code: 'API_KEY_REQUIRED', message: 'metrics: send Authorization: Bearer <METRICS_TOKEN>' } });
      return;
    }
    deps.metrics.queueDepth.set(deps.pool.waiting + (deps.scheduled?.() ?? 0));
    deps.metrics.busySlots.set(deps.pool.busy);
    deps.metrics.browserRestarts.set(deps.browser.restarts);
    deps.metrics.browserCrashes.set(deps.browser.crashes);
    if (deps.memoryKills) deps.metrics.memoryKills.set(deps.memoryKills());
    res.setHeader('Content-Type', deps.metrics.registry.contentType);
    res.end(await deps.metrics.registry.metrics());
  });
}

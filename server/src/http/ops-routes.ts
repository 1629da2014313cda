import type { Express } from 'express';
import type { BrowserManager } from '../capture/browser-manager.js';
import type { ContextPool } from '../capture/context-pool.js';
import type { Metrics } from '../ops/metrics.js';
import type { Database } from '../store/database.js';

export interface OpsDependencies {
  db: Database;
  browser: BrowserManager;
  pool: ContextPool;
  metrics: Metrics;
  /** False once shutdown has begun: load balancers stop sending traffic. */
  accepting: () => boolean;
}

async function timed<T>(check: () => Promise<T>): Promise<{ ok: boolean; ms: number; error?: string }> {
  const started = Date.now();
  try {
    await check();
    return { ok: true, ms: Date.now() - started };
  } catch (error) {
    return { ok: false, ms: Date.now() - started, error: error instanceof Error ? error.message : String(error) };
  }
}

/** `/health` (the process answers), `/ready` (it can take captures now) and `/metrics` (Prometheus). */
export function mountOpsRoutes(app: Express, deps: OpsDependencies): void {
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok', uptimeSeconds: Math.round(process.uptime()) });
  });

  app.get('/ready', async (_req, res) => {
    const [database, browser] = await Promise.all([
      timed(() => deps.db.knex.raw('select 1')),
      timed(async () => {
        if (!(await deps.browser.healthy())) throw new Error('browser does not answer');
      }),
    ]);
    const saturated = deps.pool.waiting >= deps.pool.maxQueue && deps.pool.maxQueue > 0;
    const queue = { ok: !saturated, waiting: deps.pool.waiting, busy: deps.pool.busy, slots: deps.pool.size };
    const shutdown = { ok: deps.accepting() };
    const ready = database.ok && browser.ok && queue.ok && shutdown.ok;
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unready', checks: { database, browser, queue, shutdown } });
  });

  app.get('/metrics', async (_req, res) => {
    deps.metrics.queueDepth.set(deps.pool.waiting);
    deps.metrics.busySlots.set(deps.pool.busy);
    deps.metrics.browserRestarts.set(deps.browser.restarts);
    deps.metrics.browserCrashes.set(deps.browser.crashes);
    res.setHeader('Content-Type', deps.metrics.registry.contentType);
    res.end(await deps.metrics.registry.metrics());
  });
}

/**
 * What one monitor run costs (docs/monitors.md, "What a run costs"): wall time, CPU-seconds of the
 * whole process tree (the service and its Chromium), and the bytes it keeps (its PNG, its page
 * text, its diff image), on the realistic bench page, viewport and full page. Runs in-process on
 * SQLite and the machine's Redis (a key prefix of its own); the runs are made one after the other
 * by the runner itself.
 *
 *   tsx scripts/bench/monitor-runs.ts        (BENCH_MONITOR_RUNS sets the runs per case, default 10)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig } from '../../server/src/config.js';
import { createLogger } from '../../server/src/logger.js';
import { startRuntime } from '../../server/src/runtime.js';
import { startFixtureServer } from './fixture-server.js';
import { treeCpuSeconds } from './proc-cpu.js';

const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUNS = Number(process.env.BENCH_MONITOR_RUNS ?? 10);

const dir = mkdtempSync(join(tmpdir(), 'daguerre-monitor-bench-'));
const prefix = `bench-monitors-${randomBytes(3).toString('hex')}`;
const fixtures = await startFixtureServer();
const config = loadConfig(
  {},
  {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
    RESULTS_DIR: join(dir, 'results'),
    REDIS_URL,
    JOB_QUEUE_PREFIX: prefix,
    MONITOR_MIN_INTERVAL_SECONDS: '1',
    LOG_LEVEL: 'warn',
  },
);
const runtime = await startRuntime(config, { logger: createLogger('warn') });
runtime.policy.allowList.add(new URL(fixtures.origin).host);
const plan = await runtime.accounts.createPlan({ name: 'bench', tier: 'bench', creditsPerMonth: 100_000 });
const org = await runtime.accounts.createOrganization('bench', plan);
const key = await runtime.apiKeys.create({ organizationId: org.id, name: 'bench' });
const monitors = runtime.monitors!;

try {
  for (const [label, options] of [
    ['realistic page, 1280×800 viewport', {}],
    ['realistic page, full page', { fullPage: true }],
  ] as const) {
    // Paused: the bench makes the runs itself, one after the other, rather than the schedule.
    const monitor = await monitors.service.create(
      { keyId: key.id, organizationId: org.id, userId: null, membershipActive: true },
      { url: `${fixtures.origin}/realistic.html`, intervalSeconds: 3600, paused: true, ...options } as never,
      runtime.url,
    );
    await runtime.db.knex('monitors').where('id', monitor.monitorId).update({ paused: false, paused_reason: null });
    const walls: number[] = [];
    const cpus: number[] = [];
    let pngBytes = 0;
    let textBytes = 0;
    for (let i = 0; i < RUNS + 1; i++) {
      // The runner keeps runs half an interval apart: the bench clears that guard to run back to back.
      await runtime.db.knex('monitors').where('id', monitor.monitorId).update({ last_run_at: null });
      const cpu = treeCpuSeconds(process.pid);
      const started = performance.now();
      const run = await monitors.runner!.run(monitor.monitorId);
      if (!run || run.status !== 'succeeded') throw new Error(`run failed: ${JSON.stringify(run?.error)}`);
      // The first run has no baseline (no comparison): left out of the figures.
      if (i === 0) continue;
      walls.push(performance.now() - started);
      cpus.push(treeCpuSeconds(process.pid) - cpu);
      pngBytes += statSync(join(config.RESULTS_DIR, 'monitors', monitor.monitorId, `${run.id}.png`)).size;
      const row = await runtime.db.knex('monitor_runs').where('id', run.id).first('page_text');
      textBytes += Buffer.byteLength(String(row.page_text ?? ''));
    }
    const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
    const cpu = mean(cpus);
    console.log(
      `${label}: ${RUNS} runs; wall ${Math.round(mean(walls))} ms (max ${Math.round(Math.max(...walls))}); ` +
        `CPU ${cpu.toFixed(2)} s a run; PNG ${Math.round(pngBytes / RUNS / 1024)} KiB, page text ${Math.round(textBytes / RUNS / 1024)} KiB a run; ` +
        `one-minute monitors per core at 100% CPU: ~${Math.floor(60 / cpu)}`,
    );
    await monitors.service.remove(org.id, monitor.monitorId);
  }
} finally {
  await runtime.stop();
  await fixtures.close();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
}

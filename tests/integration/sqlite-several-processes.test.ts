import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type BatchData, type DaguerreClient } from '../../client/src/index.js';
import { seedOrganization } from '../helpers/child-service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { HoldServer } from '../helpers/hold-server.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { until } from '../helpers/until.js';

const BIN = fileURLToPath(new URL('../../server/bin/daguerre.js', import.meta.url));
const PAGE = (i: number) => `<body style="margin:0;background:rgb(${(i * 37) % 256},120,90)">${i}</body>`;
const LOCKED = /database is locked|SQLITE_BUSY/i;

interface Process {
  name: string;
  url: string;
  child: ChildProcess;
  /** Everything the process wrote (its log at LOG_LEVEL=warn). */
  output: () => string;
  exited: Promise<void>;
}

/** `daguerre serve` or `daguerre worker` as a child process; resolves once it listens. */
async function start(command: 'serve' | 'worker', name: string, env: Record<string, string>): Promise<Process> {
  const child = spawn(process.execPath, [BIN, command], {
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += String(chunk)));
  child.stderr!.on('data', (chunk: Buffer) => (output += String(chunk)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const url = await until(
    () => {
      if (gone) throw new Error(`${name} exited before listening:\n${output}`);
      return /listening on (http:\/\/\S+)/.exec(output)?.[1];
    },
    90_000,
    `${name} to listen`,
  );
  return { name, url, child, output: () => output, exited };
}

/**
 * `serve` and two `worker`s on one SQLite file (WAL), each with its own connection: every write
 * transaction takes SQLite's write lock at its start (BEGIN IMMEDIATE) and waits for it, so no item
 * fails and no cancel answers 503 because another process was writing at that moment.
 */
describe('SQLite shared by serve and two workers', () => {
  const redis = new PrivateRedis();
  /** The last item of each batch to cancel loads a page held open until its cancel has answered. */
  const holds = new HoldServer((tag) => `<body style="margin:0;background:#fff">${tag}</body>`);
  const resultsDir = mkdtempSync(join(tmpdir(), 'daguerre-results-'));
  let database: TestDatabase;
  const processes: Process[] = [];
  let client: DaguerreClient;
  let apiKey = '';
  let api = '';

  beforeAll(async () => {
    await redis.start();
    await holds.start('127.0.0.1');
    database = await createTestDatabase('sqlite');
    ({ apiKey } = await seedOrganization(database.url, 1_000));
    // A short lease: every running job renews it about once a second, more writes racing the others.
    const shared = {
      DATABASE_URL: database.url,
      REDIS_URL: redis.url,
      RESULTS_DIR: resultsDir,
      JOB_LOCK_MS: '3000',
      CREDIT_SWEEP_INTERVAL_MS: '1000',
      RATE_LIMIT_MAX: '10000',
      // The held pages are the only private destination the services may load.
      EGRESS_ALLOW_LIST: holds.url.replace('http://', ''),
    };
    const serve = await start('serve', 'serve', { ...shared, PORT: '0', CAPTURE_WORKERS: '1', MAX_CONCURRENCY: '1' });
    processes.push(serve);
    api = serve.url;
    client = createClient({ baseUrl: api, apiKey });
    for (const name of ['worker 1', 'worker 2']) {
      processes.push(await start('worker', name, { ...shared, WORKER_PORT: '0', CAPTURE_WORKERS: '2', MAX_CONCURRENCY: '2' }));
    }
  }, 240_000);
  afterAll(async () => {
    for (const running of processes) {
      running.child.kill('SIGTERM');
      await running.exited;
    }
    await redis.stop();
    await holds.stop();
    await database?.drop();
    rmSync(resultsDir, { recursive: true, force: true });
  });

  it('every item succeeds or is cancelled, every cancel answers 200, credits match the files, no process logs a lock', async () => {
    // A batch to cancel ends with an item on a held page: it cannot have completed before its
    // cancel arrives, however fast its other items render (the cancel finds it waiting, or running
    // and held). The page is released once the cancel has answered.
    const batchOf = (size: number, offset: number, held?: string) =>
      client.captureBulk({
        defaults: { viewportWidth: 120, viewportHeight: 100 },
        requests: Array.from({ length: size }, (_, i) =>
          held && i === size - 1 ? { url: `${holds.url}/hold/${held}` } : { html: PAGE(offset + i) },
        ),
      });
    // One after the other: one organization's jobs run in the order they were queued, so each batch to
    // cancel still has items waiting when the batch before it has a few done.
    const batches: BatchData[] = [];
    const plan: [number, string?][] = [[0], [100, 'early'], [200], [300, 'later']];
    for (const [offset, held] of plan) batches.push(await batchOf(20, offset, held));
    const [kept1, cancelledEarly, kept2, cancelledLater] = batches as [BatchData, BatchData, BatchData, BatchData];

    // Cancels while the workers write their successes, leases and charges: each answers 200, never a 503.
    const cancel = async (batchId: string) => {
      const response = await fetch(`${api}/captures/bulk/${batchId}`, { method: 'DELETE', headers: { 'x-api-key': apiKey } });
      return { status: response.status, body: (await response.json()) as { data?: BatchData; error?: unknown } };
    };
    const succeededIn = async (batchId: string) => (await client.getBatch(batchId)).counts.succeeded;
    await until(async () => ((await succeededIn(kept1.batchId)) >= 2 ? true : undefined), 180_000, 'the first items to succeed');
    const early = await cancel(cancelledEarly.batchId);
    holds.release('early');
    await until(async () => ((await succeededIn(kept2.batchId)) >= 4 ? true : undefined), 180_000, 'more items to succeed');
    const later = await cancel(cancelledLater.batchId);
    holds.release('later');
    // A cancel of a batch already cancelled is answered as it is (and withdraws again).
    const again = await cancel(cancelledEarly.batchId);
    for (const answer of [early, later, again]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.data!.status).toBe('cancelled');
    }

    const ended = await Promise.all(batches.map((batch) => client.waitForBatch(batch.batchId, { intervalMs: 250, timeoutMs: 400_000 })));
    const failures = ended.flatMap((batch) =>
      batch.items.filter((item) => item.status === 'failed').map((item) => `${item.jobId}: ${item.error?.code} ${item.error?.message}`),
    );
    expect(failures).toEqual([]);
    const [doneKept1, doneEarly, doneKept2, doneLater] = ended as [BatchData, BatchData, BatchData, BatchData];
    for (const kept of [doneKept1, doneKept2])
      expect(kept).toMatchObject({ status: 'completed', counts: { succeeded: 20, failed: 0, cancelled: 0 } });
    for (const cancelled of [doneEarly, doneLater]) {
      expect(cancelled.status).toBe('cancelled');
      expect(cancelled.counts.succeeded + cancelled.counts.cancelled).toBe(20);
    }

    // Credits: used = items that succeeded, nothing left reserved.
    const succeeded = ended.reduce((sum, batch) => sum + batch.counts.succeeded, 0);
    const usage = await until(
      async () => {
        const credits = (await client.usage()).credits;
        return credits.remaining + credits.usedThisPeriod === 1_000 ? credits : undefined;
      },
      60_000,
      'every reservation to be settled',
    );
    expect(usage.usedThisPeriod).toBe(succeeded);
    expect(ended.reduce((sum, batch) => sum + batch.creditsCharged, 0)).toBe(succeeded);

    // Not even a renewal or a sweep met the lock: nothing of the kind in any process's log.
    for (const running of processes)
      expect(running.output().match(LOCKED)?.[0], `${running.name}:\n${running.output().slice(-3000)}`).toBeUndefined();
    console.log(`[sqlite-several-processes] 80 items on serve + 2 workers: ${succeeded} succeeded, ${80 - succeeded} cancelled`);
  }, 600_000);
});

/**
 * A new process at work: how soon a `daguerre worker` started beside a waiting job has finished it,
 * how soon a `daguerre serve` answers its first capture, and what an idle worker holds (Node and
 * Chromium together, PSS) after its first job, with the memory each renderer and each further
 * organization adds. Runs the installed form of the package (the bundle in server/dist, built here
 * with tsup as `npm pack` builds it), on SQLite and the machine's Redis (a key prefix of its own).
 * Each start is a new pod's: no cache of the filter engines, a new Chromium profile.
 *
 *   npm run bench          (runs this after the other parts)
 *   tsx scripts/bench/cold-start.ts   (this part alone; BENCH_COLD_STARTS sets the runs, default 3)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { DEFAULT_ENGINE_CACHE_DIR } from '../../server/src/capture/page/content-filters/engines.js';
import { REPO_ROOT } from './make-fixtures.js';
import { processTree, pssKb } from './proc-mem.js';
import { createKeyWithCli, freePort } from './service.js';
import { percentile, round, sleep } from './stats.js';

const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUNS = Number(process.env.BENCH_COLD_STARTS ?? 3);
const BUNDLE = join(REPO_ROOT, 'server', 'dist', 'cli.js');
const progress = (line: string) => process.stderr.write(`cold-start: ${line}\n`);
const PAGE = `<!doctype html><html><body style="font-family:sans-serif;margin:24px"><h1>Cold start</h1>${'<p>Lorem ipsum dolor sit amet. '.repeat(40)}</body></html>`;

interface Proc {
  child: ChildProcess;
  startedAt: number;
  output: () => string;
}

function start(command: 'serve' | 'worker', env: NodeJS.ProcessEnv): Proc {
  const startedAt = Date.now();
  const child = spawn(process.execPath, [BUNDLE, command], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, startedAt, output: () => output };
}

async function stop(proc: Proc): Promise<void> {
  if (proc.child.exitCode !== null) return;
  proc.child.kill('SIGTERM');
  await new Promise((resolve) => proc.child.once('exit', resolve));
}

async function waitHealthy(origin: string, proc: Proc): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < 60_000) {
    if (proc.child.exitCode !== null) throw new Error(`exited: ${proc.output()}`);
    if (
      await fetch(`${origin}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await sleep(50);
  }
  throw new Error(`did not start: ${proc.output()}`);
}

/**
 * A new pod has no cache of the parsed filter engines (content-filters/engines.ts keeps one in the
 * temporary directory between starts on one machine): removed before each start.
 */
async function freshEnv(base: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  await rm(DEFAULT_ENGINE_CACHE_DIR, { recursive: true, force: true });
  return { ...base };
}

/** PSS by kind of process of a worker's tree: node, Chromium's browser, its helpers, and renderers. */
function pssByKind(rootPid: number): Record<string, { kb: number; count: number }> {
  const kinds: Record<string, { kb: number; count: number }> = {};
  for (const proc of processTree(rootPid)) {
    const kb = pssKb(proc.pid);
    if (kb === undefined) continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    const type = /--type=([a-z-]+)/.exec(cmdline)?.[1];
    const kind =
      proc.comm === 'node'
        ? 'node'
        : type === undefined
          ? /chrom/.test(proc.comm)
            ? 'browser'
            : proc.comm
          : type === 'utility'
            ? `utility (${/--utility-sub-type=([\w.]+)/.exec(cmdline)?.[1] ?? '?'})`
            : type;
    kinds[kind] ??= { kb: 0, count: 0 };
    kinds[kind].kb += kb;
    kinds[kind].count += 1;
  }
  return kinds;
}

const totalKb = (kinds: Record<string, { kb: number }>) => Object.values(kinds).reduce((sum, kind) => sum + kind.kb, 0);

async function settledKinds(rootPid: number): Promise<Record<string, { kb: number; count: number }>> {
  // Idle means idle: the pool's resets and the collector settle within a second or two.
  await sleep(3_000);
  return pssByKind(rootPid);
}

async function pollJob(origin: string, key: string, id: string, worker?: Proc): Promise<{ finishedAt: string }> {
  for (;;) {
    if (worker && worker.child.exitCode !== null) throw new Error(`the worker exited: ${worker.output()}`);
    const { data: job } = (await (await fetch(`${origin}/captures/${id}`, { headers: { 'x-api-key': key } })).json()) as {
      data: { status: string; finishedAt?: string };
    };
    if (job.status === 'succeeded') return { finishedAt: job.finishedAt! };
    if (job.status === 'failed') throw new Error(`job failed: ${JSON.stringify(job)}`);
    await sleep(20);
    if (worker && Date.now() - worker.startedAt > 30_000) throw new Error(`no result after 30 s: ${worker.output()}`);
  }
}

export async function benchColdStart(): Promise<string> {
  // The package as `npm pack` makes it (server/scripts/prepack.mjs): the bundle and the prepared filter engines.
  execFileSync('npx', ['tsup', '--config', 'tsup.config.ts'], { cwd: join(REPO_ROOT, 'server'), stdio: 'ignore' });
  execFileSync(process.execPath, [BUNDLE, 'filters', 'prepare'], { cwd: join(REPO_ROOT, 'server'), stdio: 'ignore' });
  const dataDir = await mkdtemp(join(tmpdir(), 'daguerre-bench-cold-'));
  const prefix = `bench-cold-${randomBytes(4).toString('hex')}`;
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${join(dataDir, 'bench.db')}`,
    DEMO_KEY_FILE: join(dataDir, 'demo-api-key.txt'),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    RATE_LIMIT_MAX: '1000000',
    REDIS_URL,
    JOB_QUEUE_PREFIX: prefix,
    RESULTS_DIR: join(dataDir, 'results'),
    // As the image runs it (deploy/Dockerfile).
    NODE_OPTIONS: '--max-semi-space-size=2',
  };
  const apiEnv = { ...base, PORT: String(await freePort()), CAPTURE_WORKERS: '0' };
  const api = start('serve', apiEnv);
  const origin = `http://127.0.0.1:${apiEnv.PORT}`;
  const workerFirst: number[] = [];
  const serveFirst: number[] = [];
  let idle: Record<string, { kb: number; count: number }> = {};
  let perOrganizationKb = 0;
  let organizationsMeasured = 0;
  try {
    await waitHealthy(origin, api);
    progress('api up');
    const keys = [await createKeyWithCli(REPO_ROOT, BUNDLE, apiEnv, 1_000, 'bench-a')];
    for (const name of ['bench-b', 'bench-c', 'bench-d']) keys.push(await createKeyWithCli(REPO_ROOT, BUNDLE, apiEnv, 1_000, name));
    const enqueue = async (key: string) => {
      const response = await fetch(`${origin}/captures`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ html: PAGE }),
      });
      if (response.status !== 202) throw new Error(`POST /captures: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { data: { jobId: string } }).data.jobId;
    };

    for (let run = 0; run < RUNS; run++) {
      // A job waits; then a worker starts beside it.
      progress('keys made');
      const id = await enqueue(keys[0]!);
      const env = {
        ...(await freshEnv(base)),
        WORKER_PORT: String(await freePort()),
        ...(process.env.BENCH_WORKER_ENV ? Object.fromEntries(process.env.BENCH_WORKER_ENV.split(' ').map((kv) => kv.split('='))) : {}),
      };
      const worker = start('worker', env);
      try {
        const { finishedAt } = await pollJob(origin, keys[0]!, id, worker);
        workerFirst.push(Date.parse(finishedAt) - worker.startedAt);
        progress(`worker ${run + 1}: ${workerFirst.at(-1)} ms`);
        if (process.env.BENCH_LOG_LEVEL) progress(worker.output());
        if (run === RUNS - 1) {
          idle = await settledKinds(worker.child.pid!);
          // Each further organization's first job: its own renderer (one organization per renderer).
          const before = totalKb(idle);
          for (const key of keys.slice(1)) await pollJob(origin, key, await enqueue(key), worker);
          organizationsMeasured = keys.length - 1;
          perOrganizationKb = (totalKb(await settledKinds(worker.child.pid!)) - before) / organizationsMeasured;
        }
      } finally {
        await stop(worker);
      }
    }

    // serve: from its start to the answer of its first capture, the client trying from the start.
    for (let run = 0; run < RUNS; run++) {
      const env = { ...(await freshEnv(base)), PORT: String(await freePort()), JOB_QUEUE_PREFIX: `${prefix}-serve` };
      const serve = start('serve', env);
      try {
        for (;;) {
          if (serve.child.exitCode !== null) throw new Error(`serve exited: ${serve.output()}`);
          const response = await fetch(`http://127.0.0.1:${env.PORT}/capture`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': keys[0]! },
            body: JSON.stringify({ html: PAGE }),
          }).catch(() => undefined);
          if (response?.status === 200) {
            await response.arrayBuffer();
            serveFirst.push(Date.now() - serve.startedAt);
            progress(`serve ${run + 1}: ${serveFirst.at(-1)} ms`);
            break;
          }
          if (response && response.status !== 503) throw new Error(`POST /capture: ${response.status} ${await response.text()}`);
          await response?.arrayBuffer();
          await sleep(20);
        }
      } finally {
        await stop(serve);
      }
    }
  } finally {
    await stop(api);
    await rm(dataDir, { recursive: true, force: true });
    const redis = new Redis(REDIS_URL);
    for (const pattern of [`${prefix}:*`, `${prefix}-serve:*`]) {
      const found = await redis.keys(pattern);
      if (found.length > 0) await redis.del(...found);
    }
    redis.disconnect();
  }

  const mib = (kb: number) => round(kb / 1024, 0);
  const median = (values: number[]) => round(percentile(values, 50) / 1000, 2);
  const kinds = Object.entries(idle)
    .sort(([, a], [, b]) => b.kb - a.kb)
    .map(([kind, { kb, count }]) => `| ${kind} | ${count} | ${mib(kb)} MiB |`);
  return [
    '## Cold start and idle memory',
    '',
    `The installed form (server/dist) with the image's NODE_OPTIONS (--max-semi-space-size=2), SQLite and Redis, ${RUNS} starts each, no filter-engine cache left by an earlier start;`,
    `this ${process.env.BENCH_MACHINE ?? '2-core'} machine. Times are from the process's start.`,
    '',
    '| | median | each run |',
    '|---|---|---|',
    `| worker started beside a waiting job: job finished | ${median(workerFirst)} s | ${workerFirst.map((ms) => round(ms / 1000, 2)).join(' / ')} s |`,
    `| serve: first capture answered | ${median(serveFirst)} s | ${serveFirst.map((ms) => round(ms / 1000, 2)).join(' / ')} s |`,
    '',
    `Idle worker after its first job: **${mib(totalKb(idle))} MiB** PSS (Node and Chromium together); each further organization's first job adds`,
    `${mib(perOrganizationKb)} MiB (measured over ${organizationsMeasured}: a renderer of its own while its warm context is kept).`,
    '',
    '| process | count | PSS |',
    '|---|---|---|',
    ...kinds,
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = await benchColdStart();
  console.log(report);
  await mkdir(join(REPO_ROOT, '.bench'), { recursive: true });
  await writeFile(join(REPO_ROOT, '.bench', 'cold-start.md'), `${report}\n`);
}

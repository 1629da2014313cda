/**
 * Async captures: jobs per second through two `daguerre worker` processes against the synchronous
 * path of one `daguerre serve`, and queue latency (accepted → a worker started it). Runs on the
 * machine's MariaDB (127.0.0.1:3306, a database of its own) and Redis (a key prefix of its own).
 *
 *   npm run bench          (runs this after the main benchmark)
 *   tsx scripts/bench/async-jobs.ts   (this part alone; BENCH_ASYNC_JOBS sets the job count, default 40)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { REPO_ROOT } from './make-fixtures.js';
import { treePss } from './proc-mem.js';
import { createKeyWithCli, DEFAULT_BIN, freePort } from './service.js';
import { nowMs, percentile, round, sleep } from './stats.js';

const MYSQL_URL = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const JOBS = Number(process.env.BENCH_ASYNC_JOBS ?? 40);
const CONCURRENCY = 4;
/** A page with some text, boxes and an inline SVG: a few hundred ms of render, no network. */
const PAGE = `<!doctype html><html><body style="font-family:sans-serif;margin:24px">${Array.from(
  { length: 30 },
  (
    _,
    i,
  ) => `<section style="padding:8px;margin:8px;background:hsl(${i * 12},60%,85%)"><h2>Section ${i}</h2><p>${'Lorem ipsum dolor sit amet. '.repeat(8)}</p>
  <svg width="120" height="40"><rect width="${40 + i * 2}" height="40" fill="hsl(${i * 12},60%,45%)"/></svg></section>`,
).join('')}</body></html>`;

interface Proc {
  child: ChildProcess;
  origin: string;
}

function startProcess(command: 'serve' | 'worker', env: NodeJS.ProcessEnv): Promise<Proc> {
  const child = spawn(process.execPath, [DEFAULT_BIN, command], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const port = command === 'serve' ? env.PORT : env.WORKER_PORT;
  const origin = `http://127.0.0.1:${port}`;
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = async () => {
      if (child.exitCode !== null) return reject(new Error(`${command} exited: ${output.slice(-2000)}`));
      try {
        if ((await fetch(`${origin}/health`)).ok) return resolve({ child, origin });
      } catch {
        // not up yet
      }
      if (Date.now() - started > 60_000) return reject(new Error(`${command} did not start: ${output.slice(-2000)}`));
      setTimeout(() => void poll(), 250);
    };
    void poll();
  });
}

function stop(proc: Proc): Promise<void> {
  if (proc.child.exitCode !== null) return Promise.resolve();
  proc.child.kill('SIGTERM');
  return new Promise((resolve) => proc.child.once('exit', () => resolve()));
}

async function syncThroughput(api: Proc, key: string): Promise<{ perSecond: number; p50: number; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = nowMs();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < JOBS) {
        next += 1;
        const t = nowMs();
        const response = await fetch(`${api.origin}/capture`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ html: PAGE, viewportWidth: 1280, viewportHeight: 800 }),
        });
        await response.arrayBuffer();
        if (response.status !== 200) errors += 1;
        latencies.push(nowMs() - t);
      }
    }),
  );
  return { perSecond: JOBS / ((nowMs() - started) / 1000), p50: percentile(latencies, 50), errors };
}

interface JobState {
  status: string;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
}

async function asyncThroughput(api: Proc, key: string) {
  const started = nowMs();
  const ids: string[] = [];
  for (let i = 0; i < JOBS; i++) {
    const response = await fetch(`${api.origin}/captures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ html: PAGE, viewportWidth: 1280, viewportHeight: 800 }),
    });
    const body = (await response.json()) as { data: { jobId: string } };
    if (response.status !== 202) throw new Error(`POST /captures answered ${response.status}: ${JSON.stringify(body)}`);
    ids.push(body.data.jobId);
  }
  const acceptedMs = nowMs() - started;
  const done = new Map<string, JobState>();
  while (done.size < ids.length) {
    for (const id of ids) {
      if (done.has(id)) continue;
      const state = ((await (await fetch(`${api.origin}/captures/${id}`, { headers: { 'x-api-key': key } })).json()) as { data: JobState })
        .data;
      if (state.status === 'succeeded' || state.status === 'failed') done.set(id, state);
    }
    if (nowMs() - started > 600_000) throw new Error('async jobs did not finish within 10 minutes');
    await sleep(200);
  }
  const states = [...done.values()];
  const first = Math.min(...states.map((s) => Date.parse(s.createdAt)));
  const last = Math.max(...states.map((s) => Date.parse(s.finishedAt!)));
  const queueLatency = states.map((s) => Date.parse(s.startedAt!) - Date.parse(s.createdAt));
  return {
    perSecond: states.length / ((last - first) / 1000),
    failed: states.filter((s) => s.status === 'failed').length,
    acceptMsPerJob: acceptedMs / JOBS,
    queueLatencyP50: percentile(queueLatency, 50),
    queueLatencyP95: percentile(queueLatency, 95),
  };
}

export async function benchAsyncJobs(): Promise<string> {
  const database = `rs_bench_async_${randomBytes(3).toString('hex')}`;
  const admin = await mysql.createConnection(MYSQL_URL);
  await admin.query(`CREATE DATABASE \`${database}\``);
  const prefix = `rs-bench-${randomBytes(3).toString('hex')}`;
  const procs: Proc[] = [];
  try {
    const base: NodeJS.ProcessEnv = {
      ...process.env,
      HOST: '127.0.0.1',
      DATABASE_URL: `${MYSQL_URL}/${database}`,
      REDIS_URL,
      JOB_QUEUE_PREFIX: prefix,
      ALLOW_PRIVATE_NETWORK: 'true',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '1000000',
      MAX_CONCURRENCY: '2',
    };
    const api = await startProcess('serve', { ...base, PORT: String(await freePort()), CAPTURE_WORKERS: '0' });
    procs.push(api);
    const key = await createKeyWithCli(REPO_ROOT, DEFAULT_BIN, base, JOBS * 4);
    // Warm-up, then the synchronous path of the API instance itself.
    await syncThroughput(api, key);
    const sync = await syncThroughput(api, key);
    const apiPss = treePss(api.child.pid!).totalKb;

    const workers = [];
    for (let i = 0; i < 2; i++) {
      workers.push(await startProcess('worker', { ...base, WORKER_PORT: String(await freePort()), CAPTURE_WORKERS: '2' }));
    }
    procs.push(...workers);
    const jobs = await asyncThroughput(api, key);
    const workerPss = workers.map((w) => treePss(w.child.pid!).totalKb);

    const lines = [
      '## Async captures (POST /captures)',
      '',
      `${JOBS} captures of the same inline page (1280×800), MariaDB + Redis on loopback, this ${process.env.BENCH_MACHINE ?? '2-core'} machine.`,
      '',
      '| path | captures/s | other figures | memory (PSS) |',
      '|---|---|---|---|',
      `| synchronous, one \`serve\` (MAX_CONCURRENCY=2), ${CONCURRENCY} clients | ${round(sync.perSecond, 2)} | p50 ${Math.round(sync.p50)} ms, ${sync.errors} errors | ${Math.round(apiPss / 1024)} MiB |`,
      `| async, two \`daguerre worker\` processes (CAPTURE_WORKERS=2 each) | ${round(jobs.perSecond, 2)} (${round(jobs.perSecond / sync.perSecond, 2)}× sync) | accept ${round(jobs.acceptMsPerJob, 1)} ms/job, queue latency p50 ${Math.round(jobs.queueLatencyP50)} ms / p95 ${Math.round(jobs.queueLatencyP95)} ms, ${jobs.failed} failed | ${workerPss.map((kb) => `${Math.round(kb / 1024)}`).join(' + ')} MiB |`,
      '',
      'Queue latency is from the job being accepted to a worker starting it; with all jobs sent at once it',
      'includes the wait behind earlier jobs. Two workers on two cores share the same CPU as one service,',
      'so the async path adds capacity only when the workers run on machines of their own.',
    ];
    return lines.join('\n');
  } finally {
    await Promise.all(procs.map(stop));
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = await benchAsyncJobs();
  console.log(report);
  await mkdir(join(REPO_ROOT, '.bench'), { recursive: true });
  await writeFile(join(REPO_ROOT, '.bench', 'async-jobs.md'), `${report}\n`);
}

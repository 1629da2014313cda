/**
 * Scale-out benchmark (docs/scaling.md): async captures per second with 1, 2 and 3 render workers,
 * each on a "host" of its own (a Linux network namespace; needs root), sharing Redis and MariaDB on
 * a data host, behind one API instance. For each work kind (viewport PNG, full-page PNG, PDF) and
 * worker count it reports jobs/s, the CPU-seconds a capture costs (the workers' whole process
 * trees, Chromium included, from /proc) and the workers' memory (PSS). docs/scaling.md turns these
 * into a capacity model.
 *
 *   npm run bench:scale-out
 *   BENCH_SCALE_JOBS=16   jobs per kind and worker count (default 12)
 *   BENCH_SCALE_WORKERS=3 the largest worker count (default 3)
 *
 * On a machine with fewer cores than workers, jobs/s cannot grow past the cores: the CPU-seconds per
 * capture are the figure that carries over to larger machines.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { loadConfig } from '../../server/src/config.js';
import { openDataLayer } from '../../server/src/runtime.js';
import { startDataHost, startDaguerre, type RenderHost } from '../../tests/helpers/multi-host.js';
import { HostNetwork } from '../../tests/helpers/netns.js';
import { REPO_ROOT } from './make-fixtures.js';
import { treeCpuSeconds } from './proc-cpu.js';
import { PssSampler, settledPss } from './proc-mem.js';
import { percentile, round, sleep } from './stats.js';

const JOBS = Number(process.env.BENCH_SCALE_JOBS ?? 12);
const MAX_WORKERS = Number(process.env.BENCH_SCALE_WORKERS ?? 3);
/** Jobs one worker renders at once (CAPTURE_WORKERS and MAX_CONCURRENCY). */
const PER_WORKER = 2;

const section = (i: number) =>
  `<section style="padding:8px;margin:8px;background:hsl(${i * 12},60%,85%)"><h2>Section ${i}</h2><p>${'Lorem ipsum dolor sit amet. '.repeat(8)}</p>` +
  `<svg width="120" height="40"><rect width="${40 + (i % 40) * 2}" height="40" fill="hsl(${i * 12},60%,45%)"/></svg></section>`;
/** Text, boxes and inline SVG, no network: a few hundred ms of render. The full-page one is ~9 000 px tall. */
const PAGE = `<!doctype html><html><body style="font-family:sans-serif;margin:24px">${Array.from({ length: 30 }, (_, i) => section(i)).join('')}</body></html>`;
const TALL_PAGE = `<!doctype html><html><body style="font-family:sans-serif;margin:24px">${Array.from({ length: 60 }, (_, i) => section(i)).join('')}</body></html>`;

const KINDS = {
  viewport: { html: PAGE, viewportWidth: 1280, viewportHeight: 800 },
  'full page': { html: TALL_PAGE, viewportWidth: 1280, viewportHeight: 800, fullPage: true },
  pdf: { html: PAGE, format: 'pdf' },
} as const;

interface Row {
  kind: string;
  workers: number;
  jobsPerSecond: number;
  cpuSecondsPerCapture: number;
  /** CPU-seconds the workers used per second from the first job's creation to the last one's end: the share of the machine they got. */
  coresUsed: number;
  queueP50Ms: number;
  failed: number;
  peakPssMiBPerWorker: number;
}

interface JobState {
  status: string;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
}

async function runJobs(
  api: string,
  key: string,
  body: object,
  jobs = JOBS,
): Promise<{ perSecond: number; failed: number; queueP50: number }> {
  const headers = { 'content-type': 'application/json', 'x-api-key': key };
  const ids = await Promise.all(
    Array.from({ length: jobs }, async () => {
      const response = await fetch(`${api}/captures`, { method: 'POST', headers, body: JSON.stringify(body) });
      const answer = (await response.json()) as { data: { jobId: string } };
      if (response.status !== 202) throw new Error(`POST /captures answered ${response.status}: ${JSON.stringify(answer)}`);
      return answer.data.jobId;
    }),
  );
  const done = new Map<string, JobState>();
  const deadline = Date.now() + 600_000;
  while (done.size < ids.length) {
    for (const id of ids.filter((i) => !done.has(i))) {
      const state = ((await (await fetch(`${api}/captures/${id}`, { headers })).json()) as { data: JobState }).data;
      if (state.status === 'succeeded' || state.status === 'failed') done.set(id, state);
    }
    if (Date.now() > deadline) throw new Error('jobs did not finish within 10 minutes');
    await sleep(200);
  }
  const states = [...done.values()];
  const first = Math.min(...states.map((s) => Date.parse(s.createdAt)));
  const last = Math.max(...states.map((s) => Date.parse(s.finishedAt!)));
  return {
    perSecond: states.length / ((last - first) / 1000),
    failed: states.filter((s) => s.status === 'failed').length,
    queueP50: percentile(
      states.map((s) => Date.parse(s.startedAt ?? s.finishedAt!) - Date.parse(s.createdAt)),
      50,
    ),
  };
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('the scale-out benchmark needs root (it creates network namespaces)');
  const net = new HostNetwork();
  const workers: RenderHost[] = [];
  let api: RenderHost | undefined;
  let data: Awaited<ReturnType<typeof startDataHost>> | undefined;
  const rows: Row[] = [];
  let idlePssMiB = 0;
  try {
    const hosts: Record<string, number> = { data: 2, api: 11 };
    for (let i = 1; i <= MAX_WORKERS; i++) hosts[`w${i}`] = 20 + i;
    await net.create(hosts);
    data = await startDataHost(net, 'data');
    const admin = await mysql.createConnection(data.mariadbUrl);
    await admin.query('CREATE DATABASE daguerre_bench');
    await admin.end();
    const databaseUrl = `${data.mariadbUrl}/daguerre_bench`;
    const secrets = { STORAGE_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SIGNING_SECRETS_KEY: randomBytes(32).toString('base64') };
    const seed = await openDataLayer(loadConfig({}, { DATABASE_URL: databaseUrl, ...secrets }));
    const plan = await seed.accounts.createPlan({ name: 'bench', tier: 'test', creditsPerMonth: 1_000_000 });
    const org = await seed.accounts.createOrganization('Bench', plan);
    const key = (await seed.apiKeys.create({ organizationId: org.id, name: 'bench' })).key;
    await seed.db.close();
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: data.redisUrl,
      ...secrets,
      RATE_LIMIT_MAX: '1000000',
      CAPTURE_WORKERS: String(PER_WORKER),
      MAX_CONCURRENCY: String(PER_WORKER),
    };
    api = await startDaguerre(net, 'api', 'serve', { ...env, CAPTURE_WORKERS: '0' });

    for (let count = 1; count <= MAX_WORKERS; count++) {
      // Workers are added, never restarted: the next count reuses the warm ones.
      workers.push(await startDaguerre(net, `w${count}`, 'worker', env));
      if (count === 1) idlePssMiB = (await settledPss(workers[0]!.pid)).totalKb / 1024;
      for (const [kind, body] of Object.entries(KINDS)) {
        // One job per slot first, so every worker's browser has warm contexts before the measurement.
        await runJobs(api.url, key, body, count * PER_WORKER);
        const samplers = workers.map((w) => new PssSampler(w.pid));
        samplers.forEach((s) => s.start());
        const cpuBefore = workers.map((w) => treeCpuSeconds(w.pid));
        const result = await runJobs(api.url, key, body);
        const cpu = workers.reduce((sum, w, i) => sum + (treeCpuSeconds(w.pid) - cpuBefore[i]!), 0);
        const peak = Math.max(...samplers.map((s) => s.stop().peakKb)) / 1024;
        rows.push({
          kind,
          workers: count,
          jobsPerSecond: round(result.perSecond, 2),
          cpuSecondsPerCapture: round(cpu / JOBS, 3),
          coresUsed: round(cpu / (JOBS / result.perSecond), 2),
          queueP50Ms: Math.round(result.queueP50),
          failed: result.failed,
          peakPssMiBPerWorker: Math.round(peak),
        });
        console.log(JSON.stringify(rows.at(-1)));
      }
    }
  } finally {
    for (const w of workers) await w.kill();
    await api?.kill();
    for (const s of [...workers, ...(api ? [api] : [])]) s.reapLeftovers();
    await data?.stop();
    await net.destroy();
  }

  const table = [
    '| work | workers | jobs/s | CPU-s a capture | cores the workers got | queue wait p50 | peak PSS of one worker | failed |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.kind} | ${r.workers} | ${r.jobsPerSecond} | ${r.cpuSecondsPerCapture} | ${r.coresUsed} | ${r.queueP50Ms} ms | ${r.peakPssMiBPerWorker} MiB | ${r.failed} |`,
    ),
  ].join('\n');
  const meta = `${cpus().length} cores, ${Math.round(totalmem() / 1024 ** 3)} GiB, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} at the end; ${JOBS} jobs per row, ${PER_WORKER} at once per worker; an idle warm worker: ${Math.round(idlePssMiB)} MiB PSS`;
  const report = `## Scale-out (${new Date().toISOString()})\n\n${meta}\n\n${table}\n`;
  console.log(`\n${report}`);
  const out = join(REPO_ROOT, '.bench');
  await mkdir(out, { recursive: true });
  await writeFile(join(out, 'scale-out.md'), report);
}

await main();

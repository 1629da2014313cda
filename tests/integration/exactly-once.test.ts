import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CaptureJobData } from '../../client/src/index.js';
import { addToQueue } from '../../server/src/jobs/capture-jobs.js';
import { CAPTURE_QUEUE, type CaptureJobPayload } from '../../server/src/jobs/job-types.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PREFIX = 'exactly-once';
const LOCK_MS = 3_000;
const PAGE = '<body style="margin:0;background:rgb(40,160,110)">job</body>';

interface Worker {
  child: ChildProcess;
  exited: Promise<number | null>;
}

/**
 * Async jobs against real faults: a Redis of the test's own killed with SIGKILL and restarted
 * empty, `daguerre worker` processes killed with SIGKILL or stopped with SIGTERM. After each fault:
 * credits used = files the user can fetch, every job charged at most once, every failed job says
 * nothing was charged.
 */
describe('exactly once: Redis restarted empty, workers killed and drained', () => {
  const redis = new PrivateRedis();
  const fixtures = new FixtureServer();
  const resultsDir = mkdtempSync(join(tmpdir(), 'daguerre-results-'));
  let database: TestDatabase;
  let service: TestService;
  let queue: Queue<CaptureJobPayload>;
  const workers: Worker[] = [];
  const hooks: Array<{ id: string; body: string }> = [];

  beforeAll(async () => {
    await redis.start();
    await fixtures.start();
    fixtures.page('/page', PAGE);
    fixtures.route('/hook', (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        hooks.push({ id: String(req.headers['webhook-id']), body });
        res.writeHead(204).end();
      });
    });
    database = await createTestDatabase('mysql');
    // The API takes requests only; the renders happen in worker processes.
    service = await startTestService({
      databaseUrl: database.url,
      credits: 100,
      env: {
        REDIS_URL: redis.url,
        JOB_QUEUE_PREFIX: PREFIX,
        CAPTURE_WORKERS: '0',
        RESULTS_DIR: resultsDir,
        JOB_LOCK_MS: String(LOCK_MS),
        RATE_LIMIT_MAX: '1000',
      },
    });
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    // It reconnects by itself after the test's Redis restarts; the refused connections meanwhile are expected.
    connection.on('error', () => undefined);
    queue = new Queue(CAPTURE_QUEUE, { connection, prefix: PREFIX });
    queue.on('error', () => undefined);
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
  });
  afterAll(async () => {
    await queue?.close();
    await service?.stop();
    await database?.drop();
    await redis.stop();
    await fixtures.stop();
    rmSync(resultsDir, { recursive: true, force: true });
  });

  function startWorker(env: Record<string, string> = {}): Worker {
    const child = spawn(process.execPath, ['server/bin/daguerre.js', 'worker'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        REDIS_URL: redis.url,
        JOB_QUEUE_PREFIX: PREFIX,
        RESULTS_DIR: resultsDir,
        JOB_LOCK_MS: String(LOCK_MS),
        CAPTURE_WORKERS: '1',
        MAX_CONCURRENCY: '1',
        WORKER_PORT: '0',
        LOG_LEVEL: 'warn',
        EGRESS_ALLOW_LIST: new URL(fixtures.url).host,
        ...env,
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const worker = { child, exited: new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))) };
    workers.push(worker);
    return worker;
  }

  // Each test has an organization of its own, so its usage counts only its own jobs.
  let apiKey = '';
  let organizationId = '';
  async function freshOrganization(): Promise<void> {
    const plan = await service.runtime.accounts.createPlan({
      name: `eo-${Date.now()}-${Math.random()}`,
      tier: 'test',
      creditsPerMonth: 100,
    });
    const org = await service.runtime.accounts.createOrganization('Exactly once', plan);
    organizationId = org.id;
    apiKey = (await service.runtime.apiKeys.create({ organizationId: org.id, name: 'eo' })).key;
  }
  const headers = () => ({ 'x-api-key': apiKey });
  async function post(body: Record<string, unknown>): Promise<string> {
    const response = await service.get('/captures', {
      method: 'POST',
      headers: { ...headers(), 'content-type': 'application/json' },
      body: JSON.stringify({ viewportWidth: 120, viewportHeight: 100, ...body }),
    });
    const answer = (await response.json()) as { data: { jobId: string } };
    expect(response.status, JSON.stringify(answer)).toBe(202);
    return answer.data.jobId;
  }
  const view = async (jobId: string) =>
    ((await (await service.get(`/captures/${jobId}`, { headers: headers() })).json()) as { data: CaptureJobData }).data;
  const used = async () =>
    ((await (await service.get('/usage', { headers: headers() })).json()) as { credits: { usedThisPeriod: number } }).credits
      .usedThisPeriod;
  const final = (jobIds: string[]) =>
    until(
      async () => {
        const views = await Promise.all(jobIds.map(view));
        return views.every((v) => v.status === 'succeeded' || v.status === 'failed') ? views : undefined;
      },
      180_000,
      'every job to end',
    );
  const charges = async (jobId: string) =>
    Number(((await service.runtime.db.knex('job_charges').where('job_id', jobId).count({ n: '*' }).first()) as { n: number }).n);

  /** The promise of docs/async-jobs.md ("Charged exactly once"): credits used = files the user can fetch, and a failed job says nothing was charged. */
  async function expectChargedOnce(views: CaptureJobData[], usedBefore: number): Promise<{ succeeded: number; failed: number }> {
    let succeeded = 0;
    for (const job of views) {
      if (job.status === 'succeeded') {
        succeeded += 1;
        const file = await service.get(`/captures/${job.jobId}/file`, { headers: headers() });
        expect(file.status).toBe(200);
        expect((await file.arrayBuffer()).byteLength).toBe(job.result!.fileSize);
        expect(job.creditsCharged).toBe(1);
        expect(await charges(job.jobId)).toBe(1);
      } else {
        expect(job.creditsCharged).toBe(0);
        expect(job.error!.message).toMatch(/nothing was charged/);
        expect(await charges(job.jobId)).toBe(0);
      }
    }
    expect(await used()).toBe(usedBefore + succeeded);
    return { succeeded, failed: views.length - succeeded };
  }

  it('Redis SIGKILLed with jobs running, restarted empty after an outage longer than the job lock: each job ends once, a finished job and its file survive', async () => {
    await freshOrganization();
    startWorker();
    startWorker();
    const usedBefore = await used();
    const early = await post({ html: PAGE });
    const [earlyView] = await final([early]);
    const earlyFile = Buffer.from(await (await service.get(`/captures/${early}/file`, { headers: headers() })).arrayBuffer());

    fixtures.reset();
    // One job calls a webhook: it ends while Redis is down or just after, and its webhook still arrives.
    const jobs = [
      await post({ url: `${fixtures.url}/page`, delay: 2500, webhookUrl: `${fixtures.url}/hook` }),
      await post({ url: `${fixtures.url}/page`, delay: 2500, viewportWidth: 121 }),
      await post({ url: `${fixtures.url}/page`, delay: 2500, viewportWidth: 122 }),
    ];
    await until(
      async () => ((await Promise.all(jobs.map(view))).filter((v) => v.status === 'active').length >= 2 ? true : undefined),
      60_000,
      'two jobs running',
    );
    await redis.kill();
    // The job's record is in the database: its status answers while Redis is down.
    expect((await service.get(`/captures/${jobs[0]}`, { headers: headers() })).status).toBe(200);
    // The outage itself (the fault), longer than the job lock: BullMQ's locks all end meanwhile.
    await new Promise((resolve) => setTimeout(resolve, LOCK_MS * 2 + 2_000));
    await redis.start();

    const views = await final(jobs);
    const outcome = await expectChargedOnce([earlyView!, ...views], usedBefore);
    // Nothing was lost: the jobs had no secrets, so those the empty Redis forgot were queued again from their records.
    expect(outcome.failed).toBe(0);
    // The job that finished before the fault: still there, its file byte for byte.
    expect((await view(early)).status).toBe('succeeded');
    const again = Buffer.from(await (await service.get(`/captures/${early}/file`, { headers: headers() })).arrayBuffer());
    expect(again.equals(earlyFile)).toBe(true);
    await until(async () => (hooks.some((hook) => hook.id === `msg_${jobs[0]}`) ? true : undefined), 120_000, 'the webhook of the job');
    const event = JSON.parse(hooks.find((hook) => hook.id === `msg_${jobs[0]}`)!.body) as { type: string; data: CaptureJobData };
    expect(event).toMatchObject({ type: 'capture.succeeded', data: { jobId: jobs[0], creditsCharged: 1 } });
    console.log(
      `[exactly-once] Redis SIGKILL + empty restart: ${outcome.succeeded} succeeded, ${outcome.failed} failed, credits used ${(await used()) - usedBefore}, page loads ${fixtures.requestsTo('/page').length}`,
    );
  }, 240_000);

  it('a worker SIGKILLed the moment its job is recorded succeeded: the take-over and any rerun find the success, nothing renders or charges again', async () => {
    await freshOrganization();
    const doomed = startWorker();
    const usedBefore = await used();
    fixtures.reset();
    const jobId = await post({ url: `${fixtures.url}/page`, delay: 1000 });
    const repository = service.runtime.jobs.repository!;
    await until(
      async () => ((await repository.get(jobId))?.status === 'succeeded' ? true : undefined),
      60_000,
      'the success to be recorded',
    );
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    // Whatever BullMQ still holds of it is taken over by another worker once the lock ends.
    startWorker();
    await until(async () => ((await queue.getJob(jobId)) ? undefined : true), 60_000, 'the queue entry to be done');
    // A rerun, as a take-over or the upkeep after a Redis loss would make it.
    await addToQueue(
      queue,
      jobId,
      { organizationId, keyId: 'x', options: { html: PAGE } as CaptureJobPayload['options'], baseUrl: service.url },
      1,
    );
    await until(async () => ((await queue.getJob(jobId)) ? undefined : true), 60_000, 'the rerun to be done');
    const outcome = await expectChargedOnce([await view(jobId)], usedBefore);
    expect(outcome.succeeded).toBe(1);
    expect(fixtures.requestsTo('/page')).toHaveLength(1);
    console.log(
      `[exactly-once] worker SIGKILL after its commit + rerun: credits used ${(await used()) - usedBefore}, page loads ${fixtures.requestsTo('/page').length}`,
    );
  }, 240_000);

  it('SIGTERM: a worker finishes its job within the grace period; past the grace period it hands the job back, and another worker charges it once', async () => {
    await freshOrganization();
    const usedBefore = await used();
    const patient = startWorker({ SHUTDOWN_TIMEOUT_MS: '60000' });
    const finished = await post({ html: PAGE, delay: 2000 });
    await until(async () => ((await view(finished)).status === 'active' ? true : undefined), 60_000, 'the job to start');
    patient.child.kill('SIGTERM');
    expect(await patient.exited).toBe(0);
    // Finished before the process exited.
    expect((await view(finished)).status).toBe('succeeded');

    const hasty = startWorker({ SHUTDOWN_TIMEOUT_MS: '300' });
    const handedBack = await post({ html: PAGE, delay: 5000 });
    await until(async () => ((await view(handedBack)).status === 'active' ? true : undefined), 60_000, 'the job to start');
    await until(
      async () => ((await service.runtime.credits.reservationsOfJob(handedBack)).length === 1 ? true : undefined),
      30_000,
      'its reservation',
    );
    hasty.child.kill('SIGTERM');
    expect(await hasty.exited).toBe(0);
    // Back in the queue, its reservation released: not failed, not charged.
    expect((await view(handedBack)).status).toBe('queued');
    expect(await service.runtime.credits.reservationsOfJob(handedBack)).toEqual([]);
    startWorker();
    const views = await final([finished, handedBack]);
    const outcome = await expectChargedOnce(views, usedBefore);
    expect(outcome, JSON.stringify(views)).toEqual({ succeeded: 2, failed: 0 });
    const ledger = (await service.runtime.db.knex('capture_ledger').where('job_id', handedBack).select('status')) as Array<{
      status: string;
    }>;
    expect(ledger.map((row) => row.status).sort()).toEqual(['charged', 'released']);
    console.log(`[exactly-once] SIGTERM drain and hand-back: credits used ${(await used()) - usedBefore} for 2 jobs`);
  }, 240_000);

  it('workers SIGKILLed at random instants while jobs run: every job ends once, credits used = files fetchable', async () => {
    await freshOrganization();
    const usedBefore = await used();
    let live = [startWorker(), startWorker()];
    fixtures.reset();
    const jobs: string[] = [];
    for (let i = 0; i < 5; i++) jobs.push(await post({ url: `${fixtures.url}/page`, delay: 1200, viewportWidth: 130 + i }));
    const kills: number[] = [];
    for (let round = 0; round < 3; round++) {
      // A random instant: before, during or after a job's render, its commit or its queue update.
      const wait = 1_000 + Math.floor(Math.random() * 3_000);
      kills.push(wait);
      await new Promise((resolve) => setTimeout(resolve, wait));
      const victim = live[Math.floor(Math.random() * live.length)]!;
      victim.child.kill('SIGKILL');
      await victim.exited;
      live = [...live.filter((worker) => worker !== victim), startWorker()];
    }
    const views = await final(jobs);
    const outcome = await expectChargedOnce(views, usedBefore);
    console.log(
      `[exactly-once] 3 worker SIGKILLs after ${kills.join(', ')} ms: ${outcome.succeeded} succeeded, ${outcome.failed} failed, credits used ${(await used()) - usedBefore}, page loads ${fixtures.requestsTo('/page').length}`,
    );
  }, 240_000);
});

import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { openDataLayer } from '../../server/src/runtime.js';
import { startDataHost, startDaguerre, until, type DataHost, type RenderHost } from '../helpers/multi-host.js';
import { HoldServer } from '../helpers/hold-server.js';
import { HostNetwork } from '../helpers/netns.js';

/**
 * docs/scaling.md: API instances and workers on different hosts behave as one service when hosts die.
 * Every host is a network namespace with its own address: two API instances (`daguerre serve`,
 * CAPTURE_WORKERS=0), three workers (`daguerre worker`), and a data host running Redis, MariaDB
 * and an S3 server (where the organization's files go). A mixed load of sync and async captures runs
 * while one worker and one API instance are killed (SIGKILL) and another worker is scaled down
 * (SIGTERM). The instants are chosen by events, not timers: a capture of a page the test holds open
 * tells it which host is rendering, and that host is killed while the page is still loading.
 */

const HOSTS = { data: 2, api1: 11, api2: 12, w1: 21, w2: 22, w3: 23 };
const WORKERS = ['w1', 'w2', 'w3'] as const;
const ASYNC_JOBS = 14;
const SYNC_PER_CLIENT = 4;
/**
 * 0 (the default): a host is killed while the held page is still loading, a deterministic instant.
 * A value > 0 moves the kills later, to explore other instants by hand: the page is released first
 * and the SIGKILL follows this many ms later (render, encoding, upload or the charge may be under way).
 */
const KILL_AFTER_MS = Number(process.env.MULTI_HOST_KILL_AFTER_MS ?? 0);

/** PNG width from the IHDR chunk: each capture has a viewport width of its own, so a file names its request. */
const pngWidth = (bytes: Buffer) => (bytes.subarray(1, 4).toString() === 'PNG' ? bytes.readUInt32BE(16) : -1);
const page = (tag: string) => `<body style="margin:0;background:#${randomBytes(3).toString('hex')}"><h1>${tag}</h1></body>`;

/** A client with a home API instance and another to retry on when its home does not answer (refused, reset). */
class FailoverClient {
  failovers = 0;
  private home = 0;
  constructor(
    private readonly apis: string[],
    private readonly apiKey: string,
  ) {}

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fetch(`${this.apis[this.home]}${path}`, {
          ...init,
          headers: { ...init.headers, 'x-api-key': this.apiKey },
          signal: AbortSignal.timeout(120_000),
        });
      } catch (error) {
        if (attempt >= 3) throw error;
        this.home = (this.home + 1) % this.apis.length;
        this.failovers += 1;
      }
    }
  }

  post(path: string, body: object): Promise<Response> {
    return this.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }
}

describe('API instances and workers on five hosts, sharing Redis, MariaDB and S3 on a sixth', () => {
  const net = new HostNetwork();
  const holds = new HoldServer(page);
  let data: DataHost;
  let databaseUrl: string;
  let organizationId: string;
  let apiKey: string;
  const services = new Map<string, RenderHost>();

  beforeAll(async () => {
    await net.create(HOSTS);
    data = await startDataHost(net, 'data');
    const connection = await mysql.createConnection(data.mariadbUrl);
    await connection.query('CREATE DATABASE daguerre_multihost');
    await connection.end();
    databaseUrl = `${data.mariadbUrl}/daguerre_multihost`;
    await holds.start(net.rootAddress);
    const secrets = { STORAGE_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SIGNING_SECRETS_KEY: randomBytes(32).toString('base64') };

    const seed = await openDataLayer(loadConfig({}, { DATABASE_URL: databaseUrl, ...secrets }));
    try {
      const plan = await seed.accounts.createPlan({ name: 'multi-host', tier: 'test', creditsPerMonth: 500 });
      organizationId = (await seed.accounts.createOrganization('Multi-host org', plan)).id;
      apiKey = (await seed.apiKeys.create({ organizationId, name: 'multi-host' })).key;
      // The organization's files go to the S3 server on the data host: every file crosses hosts.
      await seed.storageConfigs.create(organizationId, { name: 'shared', ...data.s3, isDefault: true });
    } finally {
      await seed.db.close();
    }

    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: data.redisUrl,
      JOB_QUEUE_PREFIX: `rs-mh-${randomBytes(3).toString('hex')}`,
      ...secrets,
      // The pages the test serves and the S3 server are the only private destinations allowed.
      EGRESS_ALLOW_LIST: `${holds.url.replace('http://', '')},${data.s3.endpoint.replace('http://', '')}`,
      MAX_CONCURRENCY: '2',
      RATE_LIMIT_MAX: '100000',
      // A killed worker's jobs go to another one within a few seconds.
      JOB_LOCK_MS: '5000',
      // The deployment's results bucket is the S3 server on the data host too: no host shares a disk
      // with another, so a file written on one worker and read through an API instance crossed hosts.
      RESULTS_S3_ENDPOINT: data.s3.endpoint,
      RESULTS_S3_BUCKET: data.s3.bucket,
      RESULTS_S3_ACCESS_KEY_ID: data.s3.accessKeyId,
      RESULTS_S3_SECRET_ACCESS_KEY: data.s3.secretAccessKey,
    };
    const started = await Promise.all([
      ...(['api1', 'api2'] as const).map((host) => startDaguerre(net, host, 'serve', { ...env, CAPTURE_WORKERS: '0' })),
      ...WORKERS.map((host) => startDaguerre(net, host, 'worker', { ...env, CAPTURE_WORKERS: '2' })),
    ]);
    for (const service of started) services.set(service.host, service);
  }, 240_000);

  afterAll(async () => {
    for (const service of services.values()) {
      await service.kill();
      service.reapLeftovers();
    }
    await holds.stop();
    await data?.stop();
    await net.destroy();
  }, 120_000);

  it('completes every accepted job exactly once, charges what was fetched, leaves no Chromium, and fails clients over', async () => {
    const api1 = services.get('api1')!;
    const api2 = services.get('api2')!;
    const byAddress = (address: string) => [...services.values()].find((s) => s.url.includes(`//${address}:`))!;
    const clientA = new FailoverClient([api1.url, api2.url], apiKey);
    const clientB = new FailoverClient([api2.url, api1.url], apiKey);
    let width = 300;
    const jobs: { jobId: string; width: number }[] = [];
    const submit = async (client: FailoverClient, body: object) => {
      const viewportWidth = width++;
      const response = await client.post('/captures', { ...body, viewportWidth, viewportHeight: 200 });
      expect(response.status).toBe(202);
      jobs.push({ jobId: ((await response.json()) as { data: { jobId: string } }).data.jobId, width: viewportWidth });
    };
    const killAt = async (victim: RenderHost, tag: string) => {
      if (KILL_AFTER_MS > 0) {
        holds.release(tag);
        await new Promise((resolve) => setTimeout(resolve, KILL_AFTER_MS));
      }
      await victim.kill();
      holds.release(tag);
    };
    const syncResults: { width: number; status: number; requestId: string | null; bytes: Buffer }[] = [];
    const capture = async (client: FailoverClient, body: object) => {
      const viewportWidth = width++;
      const response = await client.post('/capture', { ...body, viewportWidth, viewportHeight: 200 });
      syncResults.push({
        width: viewportWidth,
        status: response.status,
        requestId: response.headers.get('x-request-id'),
        bytes: Buffer.from(await response.arrayBuffer()),
      });
    };

    // Async: a job on a held page first (the worker that takes it will be killed), then plain ones from both clients.
    await submit(clientB, { url: `${holds.url}/hold/kill-worker` });
    await Promise.all(Array.from({ length: ASYNC_JOBS }, (_, i) => submit(i % 2 ? clientA : clientB, { html: page(`job ${i}`) })));

    // Sync load from both clients at once; client A's third capture is held on api1, which then dies.
    const streamA = (async () => {
      for (let i = 0; i < SYNC_PER_CLIENT; i++)
        await capture(clientA, i === 2 ? { url: `${holds.url}/hold/kill-api` } : { html: page(`sync A ${i}`) });
    })();
    const streamB = (async () => {
      for (let i = 0; i < SYNC_PER_CLIENT; i++) await capture(clientB, { html: page(`sync B ${i}`) });
    })();

    // SIGKILL of the worker rendering the held job, while its page is loading.
    const killedWorker = byAddress(await holds.asked('kill-worker'));
    expect(WORKERS).toContain(killedWorker.host);
    // The backlog KEDA scales on counts that job, read by the surviving API instance from the shared queue.
    const metrics = await (await fetch(`${api2.url}/metrics`)).text();
    expect(Number(/^daguerre_capture_jobs_backlog (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    await killAt(killedWorker, 'kill-worker');

    // SIGKILL of api1 while client A's capture is loading there; the client must retry on api2.
    expect(byAddress(await holds.asked('kill-api'))).toBe(api1);
    await killAt(api1, 'kill-api');

    // Scale-down: SIGTERM to the worker rendering a held job; the page loads only once the worker's
    // shutdown has begun (its /ready answers 503, or it no longer listens).
    await submit(clientB, { url: `${holds.url}/hold/term-worker` });
    const terminated = byAddress(await holds.asked('term-worker'));
    expect(terminated).not.toBe(killedWorker);
    process.kill(terminated.pid, 'SIGTERM');
    const draining = () =>
      fetch(`${terminated.url}/ready`).then(
        (r) => r.status === 503,
        () => true,
      );
    await until(async () => (await draining()) || undefined, 30_000, 'the terminated worker to begin its shutdown');
    holds.release('term-worker');

    await Promise.all([streamA, streamB]);
    await terminated.exited;
    expect(terminated.child.exitCode, terminated.output()).toBe(0);

    // Every accepted job succeeds, once, and its own file comes back (through whichever API instance lives).
    const fetched: { requestId: string }[] = [];
    for (const job of jobs) {
      const status = await until(
        async () => {
          const view = (await (await clientA.request(`/captures/${job.jobId}`)).json()) as { data: { status: string; error?: unknown } };
          return ['succeeded', 'failed'].includes(view.data.status) ? view.data : undefined;
        },
        90_000,
        `job ${job.jobId}`,
        250,
      );
      expect(status, JSON.stringify(status)).toMatchObject({ status: 'succeeded' });
      const file = await clientA.request(`/captures/${job.jobId}/file`);
      expect(file.status).toBe(200);
      expect(pngWidth(Buffer.from(await file.arrayBuffer()))).toBe(job.width);
      // X-Capture-Request-Id: the attempt that rendered the file (a job taken over has more than one).
      fetched.push({ requestId: file.headers.get('x-capture-request-id')! });
    }
    for (const result of syncResults) {
      expect(result.status, result.bytes.toString().slice(0, 300)).toBe(200);
      expect(pngWidth(result.bytes)).toBe(result.width);
      fetched.push({ requestId: result.requestId! });
    }
    expect(jobs).toHaveLength(ASYNC_JOBS + 2);
    expect(syncResults).toHaveLength(2 * SYNC_PER_CLIENT);
    expect(clientA.failovers).toBeGreaterThanOrEqual(1);
    expect(clientB.failovers).toBe(0);

    // Exactly once: one charge per fetched capture, each for the attempt that delivered it; credits used = captures fetched.
    const db = await mysql.createConnection(databaseUrl);
    try {
      const [charged] = await db.query('SELECT request_id FROM capture_ledger WHERE organization_id = ? AND status = ?', [
        organizationId,
        'charged',
      ]);
      expect((charged as { request_id: string }[]).map((r) => r.request_id).sort()).toEqual(fetched.map((f) => f.requestId).sort());
      const [balance] = await db.query('SELECT used FROM credit_balances WHERE organization_id = ?', [organizationId]);
      expect(Number((balance as { used: number }[])[0]!.used)).toBe(fetched.length);
    } finally {
      await db.end();
    }
    const after = await (await fetch(`${api2.url}/metrics`)).text();
    expect(after).toMatch(/^daguerre_capture_jobs_backlog 0$/m);

    // No Chromium outlives its service: neither the killed ones' nor, after a graceful stop, the survivors'.
    for (const host of ['w3', 'w1', 'w2', 'api2'].filter(
      (h) => services.get(h)!.child.exitCode === null && services.get(h)!.child.signalCode === null,
    )) {
      await services.get(host)!.terminate();
    }
    for (const service of services.values()) {
      await until(
        () => (service.leftovers().length === 0 ? true : undefined),
        30_000,
        `the Chromium processes of ${service.host} to exit (${service.leftovers().join(', ')})`,
        200,
      );
      expect(net.pids(service.host)).toEqual([]);
    }
  }, 300_000);
});

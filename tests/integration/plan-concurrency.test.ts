import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';

const run = promisify(execFile);
const CLI = new URL('../../server/bin/daguerre.js', import.meta.url).pathname;
const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** docs/render-slots.md: a plan's limit of concurrent captures, set with the CLI, reported by /usage and enforced with 429. */
describe.each(['sqlite', 'mysql'] as const)('per-plan limit of concurrent captures (%s)', (database) => {
  let service: TestService;
  let fixtures: FixtureServer;
  let limitedKey: string;
  let planName: string;
  /** Answers of /held, kept open until the test lets them go: captures in progress, their pages alive. */
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.route('/held', (_req, res) => void held.push(res));
    service = await startTestService({
      database,
      env: { MAX_CONCURRENCY: '3', MAX_QUEUE: '8', ORG_MAX_CONCURRENT_CAPTURES: '5', RATE_LIMIT_MAX: '1000' },
    });
    planName = `two-at-once-${Date.now()}`;
    const plan = await service.runtime.accounts.createPlan({ name: planName, tier: 'test', creditsPerMonth: 100 });
    const org = await service.runtime.accounts.createOrganization('Limited org', plan);
    limitedKey = (await service.runtime.apiKeys.create({ organizationId: org.id, name: 'limited' })).key;
  }, 60_000);
  afterAll(async () => {
    for (const res of held.splice(0)) res.end();
    await service?.stop();
    await service?.database.drop();
    await fixtures?.stop();
  });

  const cli = async (...args: string[]) => {
    const { stdout } = await run('node', [CLI, ...args, '--json'], {
      env: { ...process.env, DATABASE_URL: service.database.url },
      timeout: 30_000,
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  };
  const capture = (apiKey: string, params: Record<string, string>) =>
    service.get(`/capture?${new URLSearchParams({ viewportWidth: '200', viewportHeight: '150', ...params, apiKey })}`);
  const usage = (apiKey: string) => service.clientFor(apiKey).usage();

  it('sets the limit with `plan share --max-concurrent-captures` and shows it in /usage (the default from ORG_MAX_CONCURRENT_CAPTURES)', async () => {
    expect((await usage(limitedKey)).rateLimits.concurrency).toEqual({ maxConcurrentCaptures: 5 });
    expect(await cli('plan', 'share', '--plan', planName, '--max-concurrent-captures', '2')).toMatchObject({ maxConcurrentCaptures: 2 });
    const refused = await run('node', [CLI, 'plan', 'share', '--plan', planName, '--max-concurrent-captures', '0'], {
      env: { ...process.env, DATABASE_URL: service.database.url },
    }).catch((error: { code: number; stderr: string }) => error);
    expect((refused as { stderr: string }).stderr).toMatch(/--max-concurrent-captures must be a whole number from 1 to 10000 or "default"/);
    const report = await usage(limitedKey);
    expect(report.rateLimits).toEqual({
      capture: { windowMs: 60_000, maxRequestsPerWindow: 1000 },
      concurrency: { maxConcurrentCaptures: 2 },
    });
    expect((await usage(service.apiKey)).rateLimits.concurrency).toEqual({ maxConcurrentCaptures: 5 });
  }, 60_000);

  it('answers a third capture at once with 429 CONCURRENCY_LIMIT_EXCEEDED while two are in progress, charges nothing, and accepts again once they ended', async () => {
    const before = (await usage(limitedKey)).credits.remaining;
    fixtures.reset();
    const inProgress = [0, 1].map(() => capture(limitedKey, { url: `${fixtures.url}/held` }));
    for (let i = 0; i < 400 && fixtures.requestsTo('/held').length < 2; i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(fixtures.requestsTo('/held')).toHaveLength(2);

    const refused = await capture(limitedKey, { html: OK_PAGE });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await refused.json()) as { success: boolean; error: { code: string; message: string } };
    expect(body.success).toBe(false);
    expect(body.error.code).toBe('CONCURRENCY_LIMIT_EXCEEDED');
    expect(body.error.message).toMatch(/allows 2 at once/);
    // A free slot is there: another organization is served meanwhile.
    expect((await capture(service.apiKey, { html: OK_PAGE })).status).toBe(200);

    for (const res of held.splice(0)) res.end(OK_PAGE);
    expect((await Promise.all(inProgress)).map((response) => response.status)).toEqual([200, 200]);
    expect((await capture(limitedKey, { html: OK_PAGE })).status).toBe(200);
    // Two held captures and the one after them: the refused one cost nothing.
    expect((await usage(limitedKey)).credits.remaining).toBe(before - 3);
  }, 60_000);
});

/** docs/render-slots.md: an async job is never refused for the limit: it waits for its organization's other capture. */
describe('per-plan limit of concurrent captures and async jobs (Redis, two job workers)', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let limitedKey: string;
  const held: ServerResponse[] = [];
  let holding = true;
  const prefix = `rs-test-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.route('/held', (_req, res) => (holding ? void held.push(res) : res.end(OK_PAGE)));
    service = await startTestService({
      env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '2', MAX_CONCURRENCY: '3', RATE_LIMIT_MAX: '1000' },
    });
    const plan = await service.runtime.accounts.createPlan({ name: `one-at-once-${Date.now()}`, tier: 'test', creditsPerMonth: 100 });
    await service.runtime.accounts.setPlanShare(plan.id, { maxConcurrentCaptures: 1 });
    const org = await service.runtime.accounts.createOrganization('One at once', plan);
    limitedKey = (await service.runtime.apiKeys.create({ organizationId: org.id, name: 'limited' })).key;
  }, 60_000);
  afterAll(async () => {
    for (const res of held.splice(0)) res.end();
    await service?.stop();
    await fixtures?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('runs a second job of a limit-1 plan after the first (never refused), while a sync capture past the limit gets 429', async () => {
    const client = service.clientFor(limitedKey);
    const before = (await client.usage()).credits.remaining;
    const post = async () => {
      const response = await service.get('/captures', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': limitedKey },
        body: JSON.stringify({ url: `${fixtures.url}/held`, viewportWidth: 200, viewportHeight: 150 }),
      });
      expect(response.status).toBe(202);
      return ((await response.json()) as { data: { jobId: string } }).data.jobId;
    };
    const jobs = [await post(), await post()];
    // Both jobs are taken by the two workers; one renders (its page held open), the other waits for the limit.
    for (let i = 0; i < 400; i += 1) {
      const states = await Promise.all(jobs.map(async (id) => (await client.getCapture(id)).status));
      if (states.every((state) => state === 'active') && held.length === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(await Promise.all(jobs.map(async (id) => (await client.getCapture(id)).status))).toEqual(['active', 'active']);
    expect(fixtures.requestsTo('/held')).toHaveLength(1);
    const refused = await service.get(
      `/capture?${new URLSearchParams({ html: OK_PAGE, viewportWidth: '200', viewportHeight: '150', apiKey: limitedKey })}`,
    );
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('CONCURRENCY_LIMIT_EXCEEDED');

    holding = false;
    for (const res of held.splice(0)) res.end(OK_PAGE);
    for (const id of jobs) await client.waitForCapture(id, { intervalMs: 100, timeoutMs: 30_000 });
    expect(await Promise.all(jobs.map(async (id) => (await client.getCapture(id)).status))).toEqual(['succeeded', 'succeeded']);
    expect(fixtures.requestsTo('/held')).toHaveLength(2);
    expect((await client.usage()).credits.remaining).toBe(before - 2);
  }, 90_000);
});

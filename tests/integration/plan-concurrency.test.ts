import { execFile } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const run = promisify(execFile);
const CLI = new URL('../../server/bin/rendershot.js', import.meta.url).pathname;
const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';

/** Issue #27: a plan's limit of concurrent captures, set with the CLI, reported by /usage and enforced with 429. */
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
    service = await startTestService({ database, env: { MAX_CONCURRENCY: '3', MAX_QUEUE: '8', ORG_MAX_CONCURRENT_CAPTURES: '5', RATE_LIMIT_MAX: '1000' } });
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
    const { stdout } = await run('node', [CLI, ...args, '--json'], { env: { ...process.env, DATABASE_URL: service.database.url }, timeout: 30_000 });
    return JSON.parse(stdout) as Record<string, unknown>;
  };
  const capture = (apiKey: string, params: Record<string, string>) =>
    service.get(`/capture?${new URLSearchParams({ viewportWidth: '200', viewportHeight: '150', ...params, apiKey })}`);
  const usage = (apiKey: string) => service.clientFor(apiKey).usage();

  it('sets the limit with `plan share --max-concurrent-captures` and shows it in /usage (the default from ORG_MAX_CONCURRENT_CAPTURES)', async () => {
    expect((await usage(limitedKey)).rateLimits.concurrency).toEqual({ maxConcurrentCaptures: 5 });
    expect(await cli('plan', 'share', '--plan', planName, '--max-concurrent-captures', '2')).toMatchObject({ maxConcurrentCaptures: 2 });
    const refused = await run('node', [CLI, 'plan', 'share', '--plan', planName, '--max-concurrent-captures', '0'], { env: { ...process.env, DATABASE_URL: service.database.url } }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect((refused as { stderr: string }).stderr).toMatch(/--max-concurrent-captures must be a whole number from 1 to 10000 or "default"/);
    const report = await usage(limitedKey);
    expect(report.rateLimits).toEqual({ capture: { windowMs: 60_000, maxRequestsPerWindow: 1000 }, concurrency: { maxConcurrentCaptures: 2 } });
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

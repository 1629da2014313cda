import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const run = promisify(execFile);
const CLI = new URL('../../server/bin/daguerre.js', import.meta.url).pathname;
const CAPTURE_TIMEOUT_MS = 8_000;
const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';

/** docs/render-slots.md: `daguerre plan share` sets a plan's share of the browser, and the scheduler applies it. */
describe('fair share as a plan setting (MariaDB, MAX_CONCURRENCY=2)', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let planName: string;
  let floodKey: string;
  let honestKey: string;
  const cli = async (...args: string[]) => {
    const { stdout } = await run('node', [CLI, ...args, '--json'], {
      env: { ...process.env, DATABASE_URL: service.database.url },
      timeout: 30_000,
    });
    return JSON.parse(stdout) as Record<string, unknown> & Array<Record<string, unknown>>;
  };
  const metrics = async () => (await service.get('/metrics')).text();
  const capture = (apiKey: string, params: Record<string, string>) =>
    service.get(`/capture?${new URLSearchParams({ viewportWidth: '200', viewportHeight: '150', ...params, apiKey })}`);

  /** Two busy loops of the flooding organization, then an honest capture of another: which ends first? */
  async function floodThenHonest(): Promise<{ honestStatus: number; floodSettledBeforeHonest: number; honestWaited: boolean }> {
    let settled = 0;
    const flood = [0, 1].map(() =>
      capture(floodKey, { url: `${fixtures.url}/busy-loop` }).then((response) => ((settled += 1), response.status)),
    );
    // Both slots are taken by the flood (alone, it may use them all).
    for (let i = 0; i < 100 && !/daguerre_busy_slots 2\b/.test(await metrics()); i += 1)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await metrics()).toMatch(/daguerre_busy_slots 2\b/);
    const honest = capture(honestKey, { html: OK_PAGE });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const honestWaited = /daguerre_waiting_organizations 1\b/.test(await metrics());
    const honestStatus = (await honest).status;
    const floodSettledBeforeHonest = settled;
    expect(await Promise.all(flood)).toEqual([504, 504]);
    return { honestStatus, floodSettledBeforeHonest, honestWaited };
  }

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.page('/busy-loop', '<!doctype html><html><body><script>while (true) {}</script></body></html>');
    // Busy loops that hold their slots until the deadline (the unresponsiveness watchdog is off here): a test of shares alone.
    service = await startTestService({
      database: 'mysql',
      env: {
        CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS),
        MAX_CONCURRENCY: '2',
        RATE_LIMIT_MAX: '1000',
        PAGE_UNRESPONSIVE_TIMEOUT_MS: '0',
      },
    });
    planName = `flood-${Date.now()}`;
    const plan = await service.runtime.accounts.createPlan({ name: planName, tier: 'test', creditsPerMonth: 100 });
    const flood = await service.runtime.accounts.createOrganization('Flooding org', plan);
    floodKey = (await service.runtime.apiKeys.create({ organizationId: flood.id, name: 'flood' })).key;
    honestKey = service.apiKey;
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await service?.database.drop();
    await fixtures?.stop();
  });

  it('validates and stores the setting: percent or default, weight', async () => {
    expect(await cli('plan', 'share', '--plan', planName, '--max-share-percent', '40', '--weight', '3')).toMatchObject({
      maxSharePercent: 40,
      fairShareWeight: 3,
    });
    expect(await cli('plan', 'share', '--plan', planName, '--max-share-percent', 'default')).toMatchObject({
      maxSharePercent: null,
      fairShareWeight: 3,
    });
    const listed = (await cli('plan', 'list')).find((row) => row.name === planName);
    expect(listed).toMatchObject({ maxSharePercent: null, fairShareWeight: 3 });
    const refused = await run('node', [CLI, 'plan', 'share', '--plan', planName, '--max-share-percent', '0'], {
      env: { ...process.env, DATABASE_URL: service.database.url },
    }).catch((error: { code: number; stderr: string }) => error);
    expect((refused as { code: number }).code).not.toBe(0);
    expect((refused as { stderr: string }).stderr).toMatch(/--max-share-percent must be a whole number from 1 to 100 or "default"/);
    await cli('plan', 'share', '--plan', planName, '--weight', '1');
  }, 60_000);

  it('with --max-share-percent 100 the flooding organization keeps both slots: the honest capture waits for a flood deadline', async () => {
    await cli('plan', 'share', '--plan', planName, '--max-share-percent', '100');
    const outcome = await floodThenHonest();
    expect(outcome.honestWaited).toBe(true);
    // It gets a slot only when a busy loop reaches its deadline: then it renders (200) or runs into its own (504).
    expect([200, 504]).toContain(outcome.honestStatus);
    expect(outcome.floodSettledBeforeHonest).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('with --max-share-percent 25 on 2 slots it is held to one while another organization waits', async () => {
    await cli('plan', 'share', '--plan', planName, '--max-share-percent', '25');
    const outcome = await floodThenHonest();
    expect(outcome.honestStatus).toBe(200);
    // Served while both busy loops were still running or queued: one of them gave its slot back.
    expect(outcome.floodSettledBeforeHonest).toBe(0);
  }, 60_000);
});

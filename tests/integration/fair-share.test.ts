import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const CAPTURE_TIMEOUT_MS = 10_000;
const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';

/** docs/render-slots.md: one organization's hostile pages cannot hold every browser slot. */
describe('fair share between organizations (MAX_CONCURRENCY=2, default MAX_ORG_SHARE_PERCENT)', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let honestKey: string;
  let honestOrg: string;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.page('/busy-loop', '<!doctype html><html><body><script>while (true) {}</script></body></html>');
    // Busy loops that hold their slots until the deadline (the unresponsiveness watchdog is off here): a test of shares alone.
    service = await startTestService({
      env: {
        CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS),
        MAX_CONCURRENCY: '2',
        RATE_LIMIT_MAX: '1000',
        PAGE_UNRESPONSIVE_TIMEOUT_MS: '0',
      },
    });
    const plan = await service.runtime.accounts.createPlan({ name: `honest-${Date.now()}`, tier: 'test', creditsPerMonth: 100 });
    const org = await service.runtime.accounts.createOrganization('Honest org', plan);
    honestOrg = org.id;
    honestKey = (await service.runtime.apiKeys.create({ organizationId: org.id, name: 'honest' })).key;
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  it('serves an honest organization within a few seconds while another floods the pool with busy loops', async () => {
    const hostile = Array.from({ length: 4 }, () =>
      service.get(
        `/capture?${new URLSearchParams({ url: `${fixtures.url}/busy-loop`, viewportWidth: '200', viewportHeight: '150', apiKey: service.apiKey })}`,
      ),
    );
    // Let the hostile captures take what they can.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const metrics = await (await service.get('/metrics')).text();
    expect(metrics).toMatch(/daguerre_waiting_organizations 1/);
    expect(metrics).toMatch(/daguerre_longest_organization_queue [1-9]/);
    // Alone, the hostile organization runs on both slots (above its share of one) with two more waiting.
    expect(metrics).toMatch(/daguerre_organizations_by_queue_depth\{depth="2-4"\} 1\b/);
    expect(metrics).toMatch(/daguerre_organizations_by_queue_depth\{depth="1"\} 0\b/);
    expect(metrics).toMatch(/daguerre_organizations_by_queue_depth\{depth="5\+"\} 0\b/);
    expect(metrics).toMatch(/daguerre_organizations_over_share 1\b/);
    expect(metrics).not.toContain(service.organizationId);

    const started = Date.now();
    const honest = await service.get(
      `/capture?${new URLSearchParams({ html: OK_PAGE, viewportWidth: '200', viewportHeight: '150', apiKey: honestKey })}`,
    );
    const elapsed = Date.now() - started;
    expect(honest.status).toBe(200);
    // Without a share the honest capture waits for a hostile deadline (10 s); generous margin for a loaded machine.
    expect(elapsed).toBeLessThan(CAPTURE_TIMEOUT_MS - 3_000);
    expect(honestOrg).not.toBe(service.organizationId);

    const statuses = (await Promise.all(hostile)).map((response) => response.status);
    expect(statuses.every((status) => status === 504)).toBe(true);
  }, 60_000);
});

/**
 * docs/render-slots.md: two organizations flood both slots with pages that hang from their first
 * script; a third organization's capture waits for one hung page to be ended
 * (PAGE_UNRESPONSIVE_TIMEOUT_MS), not for their deadlines, and not behind the flooders' next
 * captures.
 */
describe('a third organization during a two-organization flood of hung pages (MAX_CONCURRENCY=2)', () => {
  const UNRESPONSIVE_MS = 4_000;
  let service: TestService;
  let fixtures: FixtureServer;
  const keys: Record<'a' | 'b' | 'c', string> = { a: '', b: '', c: '' };

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.page('/hung', '<!doctype html><html><body><script>for (;;) {}</script></body></html>');
    // The deadline is far: only the watchdog can end a hung page in this test.
    service = await startTestService({
      env: {
        CAPTURE_TIMEOUT_MS: '30000',
        PAGE_UNRESPONSIVE_TIMEOUT_MS: String(UNRESPONSIVE_MS),
        MAX_CONCURRENCY: '2',
        RATE_LIMIT_MAX: '1000',
      },
    });
    keys.a = service.apiKey;
    for (const name of ['b', 'c'] as const) {
      const plan = await service.runtime.accounts.createPlan({ name: `${name}-${Date.now()}`, tier: 'test', creditsPerMonth: 100 });
      const org = await service.runtime.accounts.createOrganization(`Org ${name}`, plan);
      keys[name] = (await service.runtime.apiKeys.create({ organizationId: org.id, name })).key;
    }
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const capture = (apiKey: string, params: Record<string, string>) =>
    service.get(`/capture?${new URLSearchParams({ viewportWidth: '200', viewportHeight: '150', ...params, apiKey })}`);
  const remaining = async (apiKey: string) => (await service.clientFor(apiKey).usage()).credits.remaining;

  it('serves the third organization once the first hung page is ended, before either flooder captures again; the hung pages cost nothing', async () => {
    const before = { a: await remaining(keys.a), b: await remaining(keys.b), c: await remaining(keys.c) };
    let settled = 0;
    const flood = (['a', 'b', 'a', 'b'] as const).map((org) =>
      capture(keys[org], { url: `${fixtures.url}/hung` }).then(async (response) => {
        settled += 1;
        return { status: response.status, code: ((await response.json()) as { error?: { code: string } }).error?.code };
      }),
    );
    // Both slots hung, and each flooder has a capture waiting.
    const metrics = async () => (await service.get('/metrics')).text();
    for (let i = 0; i < 200 && !/daguerre_waiting_organizations 2\b/.test(await metrics()); i += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await metrics()).toMatch(/daguerre_busy_slots 2\b/);
    expect(settled).toBe(0);

    const started = Date.now();
    const honest = await capture(keys.c, { html: OK_PAGE });
    const waited = Date.now() - started;
    const settledBeforeHonest = settled;
    expect(honest.status, await honest.clone().text()).toBe(200);
    // Only first-wave pages had been ended: the third organization went before the flooders' second captures.
    expect(settledBeforeHonest).toBeGreaterThanOrEqual(1);
    expect(settledBeforeHonest).toBeLessThanOrEqual(2);
    console.info(`[fair-share] third organization's capture answered after ${waited} ms (watchdog ${UNRESPONSIVE_MS} ms)`);

    expect(await Promise.all(flood)).toEqual(flood.map(() => ({ status: 504, code: 'PAGE_UNRESPONSIVE' })));
    expect({ a: await remaining(keys.a), b: await remaining(keys.b), c: await remaining(keys.c) }).toEqual({ ...before, c: before.c - 1 });
  }, 90_000);
});

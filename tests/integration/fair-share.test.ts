import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const CAPTURE_TIMEOUT_MS = 10_000;
const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';

/** Issue #15: one organization's hostile pages cannot hold every browser slot. */
describe('fair share between organizations (MAX_CONCURRENCY=2, default MAX_ORG_SHARE_PERCENT)', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let honestKey: string;
  let honestOrg: string;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.page('/busy-loop', '<!doctype html><html><body><script>while (true) {}</script></body></html>');
    // Busy loops that hold their slots until the deadline (the unresponsiveness watchdog is off here): a test of shares alone.
    service = await startTestService({ env: { CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS), MAX_CONCURRENCY: '2', RATE_LIMIT_MAX: '1000', PAGE_UNRESPONSIVE_TIMEOUT_MS: '600000' } });
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
      service.get(`/capture?${new URLSearchParams({ url: `${fixtures.url}/busy-loop`, viewportWidth: '200', viewportHeight: '150', apiKey: service.apiKey })}`),
    );
    // Let the hostile captures take what they can.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const metrics = await (await service.get('/metrics')).text();
    expect(metrics).toMatch(/rendershot_waiting_organizations 1/);
    expect(metrics).toMatch(/rendershot_longest_organization_queue [1-9]/);
    // Alone, the hostile organization runs on both slots (above its share of one) with two more waiting.
    expect(metrics).toMatch(/rendershot_organizations_by_queue_depth\{depth="2-4"\} 1\b/);
    expect(metrics).toMatch(/rendershot_organizations_by_queue_depth\{depth="1"\} 0\b/);
    expect(metrics).toMatch(/rendershot_organizations_by_queue_depth\{depth="5\+"\} 0\b/);
    expect(metrics).toMatch(/rendershot_organizations_over_share 1\b/);
    expect(metrics).not.toContain(service.organizationId);

    const started = Date.now();
    const honest = await service.get(`/capture?${new URLSearchParams({ html: OK_PAGE, viewportWidth: '200', viewportHeight: '150', apiKey: honestKey })}`);
    const elapsed = Date.now() - started;
    expect(honest.status).toBe(200);
    // Without a share the honest capture waits for a hostile deadline (10 s); generous margin for a loaded machine.
    expect(elapsed).toBeLessThan(CAPTURE_TIMEOUT_MS - 3_000);
    expect(honestOrg).not.toBe(service.organizationId);

    const statuses = (await Promise.all(hostile)).map((response) => response.status);
    expect(statuses.every((status) => status === 504)).toBe(true);
  }, 60_000);
});

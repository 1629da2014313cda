import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const CAPTURE_TIMEOUT_MS = 4_000;

/** Every capture ends by its deadline, a page that opens dialogs forever included. */
describe('dialogs and the deadline', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.page('/alert-loop', '<!doctype html><html><body><script>for (;;) { alert("hi"); }</script></body></html>');
    service = await startTestService({ env: { CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS), MAX_CONCURRENCY: '1' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  it('answers 504 near the deadline for an alert loop, and the next capture works', async () => {
    const started = Date.now();
    const response = await service.get(
      `/capture?${new URLSearchParams({ url: `${fixtures.url}/alert-loop`, viewportWidth: '200', viewportHeight: '150', apiKey: service.apiKey })}`,
    );
    const elapsed = Date.now() - started;
    expect(response.status).toBe(504);
    expect(elapsed).toBeLessThan(CAPTURE_TIMEOUT_MS + 3_000);
    const next = await service.get(
      `/capture?${new URLSearchParams({ html: '<p>ok</p>', viewportWidth: '200', viewportHeight: '150', apiKey: service.apiKey })}`,
    );
    expect(next.status).toBe(200);
  }, 60_000);
});

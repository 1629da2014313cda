import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';
/** Far beyond the watchdog: a 504 PAGE_UNRESPONSIVE can only come from the watchdog, never from the deadline. */
const CAPTURE_TIMEOUT_MS = 30_000;
const UNRESPONSIVE_MS = 2_000;
/** Spins from its first script: the page never loads and its main thread never answers. */
const BUSY_FROM_FIRST_SCRIPT = '<!doctype html><body><script>for (;;) {}</script></body>';
/**
 * Loads, then spins. The request's delay (3 s) keeps the capture waiting after load, so the page is
 * certainly busy before the capture could finish: no race between the loop and a fast capture.
 */
const BUSY_AFTER_LOAD = `<body style="background:#0a0">ok<script>addEventListener('load', () => setTimeout(() => { for (;;) {} }, 0));</script></body>`;

interface ErrorBody {
  success: false;
  error: { code: string; message: string };
}

/** docs/render-slots.md: a page that stops answering is ended within PAGE_UNRESPONSIVE_TIMEOUT_MS, not at its deadline. */
describe(`unresponsive pages (PAGE_UNRESPONSIVE_TIMEOUT_MS=${UNRESPONSIVE_MS}, MAX_CONCURRENCY=1)`, () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let otherKey: string;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.page('/busy', BUSY_FROM_FIRST_SCRIPT);
    // Slow but alive: the answer comes after twice the watchdog's timeout, then the page works in short bursts.
    fixtures.route('/slow-but-alive', (_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<body style="margin:0;background:rgb(40,160,110)"><script>
          let bursts = 0;
          const burst = () => { const end = Date.now() + 300; while (Date.now() < end) {} if (++bursts < 8) setTimeout(burst, 20); };
          burst();
        </script></body>`);
      }, 2 * UNRESPONSIVE_MS);
    });
    service = await startTestService({
      env: {
        CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS),
        PAGE_UNRESPONSIVE_TIMEOUT_MS: String(UNRESPONSIVE_MS),
        MAX_CONCURRENCY: '1',
        RATE_LIMIT_MAX: '1000',
      },
    });
    const plan = await service.runtime.accounts.createPlan({ name: `other-${Date.now()}`, tier: 'test', creditsPerMonth: 100 });
    const other = await service.runtime.accounts.createOrganization('Other org', plan);
    otherKey = (await service.runtime.apiKeys.create({ organizationId: other.id, name: 'other' })).key;
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const query = (params: Record<string, string>, apiKey = service.apiKey) =>
    `/capture?${new URLSearchParams({ viewportWidth: '200', viewportHeight: '150', ...params, apiKey })}`;
  const expectCaptureWorks = async (apiKey: string) => {
    const response = await service.get(query({ html: OK_PAGE }, apiKey));
    expect(response.status, await response.clone().text()).toBe(200);
    expect(near(decodePng(new Uint8Array(await response.arrayBuffer())).pixel(100, 75), [40, 160, 110])).toBe(true);
  };
  const ledgerStatuses = async () =>
    ((await service.runtime.credits.ledger(service.organizationId, 500)) as Array<{ status: string }>).map((r) => r.status);

  it('ends a page busy from its first script with 504 PAGE_UNRESPONSIVE naming the stage, charges nothing, and every organization captures next', async () => {
    const before = await service.client.usage();
    const response = await service.get(query({ url: `${fixtures.url}/busy` }));
    expect(response.status).toBe(504);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe('PAGE_UNRESPONSIVE');
    expect(body.error.message).toMatch(/stopped responding while loading the page/);
    expect(body.error.message).toMatch(/did not answer for \d+ ms/);
    expect(body.error.message).toMatch(/nothing was charged/);
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
    expect(await ledgerStatuses()).not.toContain('reserved');
    // One slot only: both captures prove the hung page gave it back.
    await expectCaptureWorks(otherKey);
    await expectCaptureWorks(service.apiKey);
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining - 1);
  });

  it('ends inline html busy from its first script the same way', async () => {
    const before = await service.client.usage();
    const response = await service.get(query({ html: BUSY_FROM_FIRST_SCRIPT }));
    expect(response.status).toBe(504);
    expect(((await response.json()) as ErrorBody).error).toMatchObject({
      code: 'PAGE_UNRESPONSIVE',
      message: expect.stringMatching(/while loading the page/),
    });
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
    await expectCaptureWorks(service.apiKey);
  });

  it('answers 504 PAGE_UNRESPONSIVE naming the stage when a script keeps the page busy after load', async () => {
    const before = await service.client.usage();
    const response = await service.get(query({ html: BUSY_AFTER_LOAD, delay: '3000' }));
    expect(response.status).toBe(504);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe('PAGE_UNRESPONSIVE');
    // A stage after load: the page loaded, then hung.
    expect(body.error.message).toMatch(
      /while (checking for navigations after load|inspecting|applying|waiting for the delay|cleaning|capturing)/,
    );
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
    await expectCaptureWorks(service.apiKey);
  });

  it('leaves a slow page alone while its main thread answers: 200 for an answer after twice the timeout and work in short bursts', async () => {
    const response = await service.get(query({ url: `${fixtures.url}/slow-but-alive`, delay: '3000' }));
    expect(response.status, await response.clone().text()).toBe(200);
    expect(near(decodePng(new Uint8Array(await response.arrayBuffer())).pixel(100, 75), [40, 160, 110])).toBe(true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAIT_UNTIL } from '@daguerre/contract';
import { DaguerreError } from '../../client/src/index.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const CAPTURE_TIMEOUT_MS = 8_000;
const RED = [200, 0, 0];
const BLUE = [0, 0, 200];
const GREEN = [0, 160, 0];
const small = { viewportWidth: 200, viewportHeight: 150 } as const;

/** delay, waitUntil and waitForSelector. */
describe('capture timing: delay, waitUntil, waitForSelector', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    // Answers 1.5 s late: later than the load event, within the network-idle wait.
    fixtures.route('/slow-data', (_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('ok'), 1_500);
    });
    service = await startTestService({ env: { CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS), RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const centre = async (request: Parameters<TestService['client']['capture']>[0]) => {
    const image = decodePng((await service.client.capture({ ...small, ...request })).bytes);
    return image.pixel(100, 75);
  };

  it('waits `delay` ms before the capture: the colour set 1 s after load shows only with a delay', async () => {
    const url = `${fixtures.url}/delayed-colour.html`;
    expect(near(await centre({ url, delay: 0 }), RED)).toBe(true);
    const started = Date.now();
    expect(near(await centre({ url, delay: 1_800 }), BLUE)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_800);
  });

  it('accepts all four waitUntil values; networkidle0 waits for a slow fetch, load does not', async () => {
    const url = `${fixtures.url}/slow-fetch.html`;
    for (const waitUntil of WAIT_UNTIL) {
      const colour = await centre({ url, waitUntil });
      if (waitUntil === 'networkidle0') expect(near(colour, GREEN), waitUntil).toBe(true);
      if (waitUntil === 'load' || waitUntil === 'domcontentloaded') expect(near(colour, RED), waitUntil).toBe(true);
    }
  });

  it('applies networkidle0 to inline html too', async () => {
    const html = `<html><body style="margin:0;background:rgb(200,0,0)"><script>fetch('${fixtures.url}/slow-data').then(() => { document.body.style.background = 'rgb(0,160,0)'; });</script></body></html>`;
    expect(near(await centre({ html, waitUntil: 'networkidle0' }), GREEN)).toBe(true);
    expect(near(await centre({ html, waitUntil: 'load' }), RED)).toBe(true);
    expect(near(await centre({ html, waitUntil: 'domcontentloaded' }), RED)).toBe(true);
  });

  it('waits for waitForSelector: an element added 500 ms after load is in the output', async () => {
    const url = `${fixtures.url}/late-element.html`;
    expect(near(await centre({ url }), [255, 255, 255])).toBe(true);
    const image = decodePng((await service.client.capture({ ...small, url, waitForSelector: '#late' })).bytes);
    expect(near(image.pixel(50, 50), GREEN)).toBe(true);
    expect(near(image.pixel(150, 120), [255, 255, 255])).toBe(true);
  });

  it('answers a selector that never appears with a clear error before the capture deadline, charging nothing', async () => {
    const before = await service.client.usage();
    const started = Date.now();
    const error = await service.client.capture({ ...small, url: `${fixtures.url}/late-element.html`, waitForSelector: '#never' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(DaguerreError);
    const apiError = error as DaguerreError;
    expect([apiError.status, apiError.code]).toEqual([400, 'INVALID_INPUT']);
    expect(apiError.message).toContain('waitForSelector');
    expect(apiError.message).toContain('#never');
    expect(elapsed).toBeLessThan(CAPTURE_TIMEOUT_MS);
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);

    const invalid = await service.client.capture({ ...small, url: `${fixtures.url}/late-element.html`, waitForSelector: 'div[[' }).then(
      () => undefined,
      (e: unknown) => e as DaguerreError,
    );
    // An invalid selector is refused before the page loads.
    expect([invalid?.status, invalid?.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(invalid?.message).toContain('waitForSelector: "div[[" is not a valid CSS selector');
  });
});

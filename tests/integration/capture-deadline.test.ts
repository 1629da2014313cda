import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const CAPTURE_TIMEOUT_MS = 3_000;
const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';

/** CAPTURE_TIMEOUT_MS: a capture that cannot finish answers 504 in time, costs nothing, and leaves the pool usable. */
describe('capture deadline (CAPTURE_TIMEOUT_MS=3000)', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    // Sends the start of a document and then nothing, forever.
    fixtures.route('/never-finishes', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<!doctype html><html><head><title>loading</title></head><body style="background:rgb(200,0,0)">');
    });
    // A complete document whose image never arrives: no load event.
    fixtures.route('/hanging-image.png', (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
    });
    // A script that never yields: the renderer hangs, protocol calls to it too.
    fixtures.page('/busy-loop', '<!doctype html><html><body><script>for (;;) {}</script></body></html>');
    fixtures.page(
      '/stuck-subresource',
      `<!doctype html><html><body style="background:rgb(200,0,0)"><img src="/hanging-image.png"></body></html>`,
    );
    // The deadline, not the unresponsiveness watchdog (page-unresponsive.test.ts), ends the busy loop here.
    service = await startTestService({
      env: {
        CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS),
        MAX_CONCURRENCY: '1',
        RATE_LIMIT_MAX: '1000',
        PAGE_UNRESPONSIVE_TIMEOUT_MS: '0',
      },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const expectCaptureWorks = async () => {
    const image = decodePng((await service.client.capture({ html: OK_PAGE, viewportWidth: 200, viewportHeight: 150 })).bytes);
    expect(near(image.pixel(100, 75), [40, 160, 110])).toBe(true);
  };

  for (const path of ['/never-finishes', '/busy-loop']) {
    it(`answers 504 CAPTURE_TIMEOUT for ${path} near the deadline, charges nothing, and the next capture works`, async () => {
      const before = await service.client.usage();
      const started = Date.now();
      const response = await service.get(
        `/capture?${new URLSearchParams({ url: `${fixtures.url}${path}`, viewportWidth: '200', viewportHeight: '150', apiKey: service.apiKey })}`,
      );
      const elapsed = Date.now() - started;
      expect(response.status).toBe(504);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('CAPTURE_TIMEOUT');
      expect(body.error.message).toContain(`${CAPTURE_TIMEOUT_MS} ms`);
      expect(elapsed).toBeGreaterThan(CAPTURE_TIMEOUT_MS - 1_000);
      expect(elapsed).toBeLessThan(CAPTURE_TIMEOUT_MS + 3_000);
      expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
      await expectCaptureWorks();
    });
  }

  // docs/capture-fidelity.md: a rendered document whose load never comes is captured as it is (best attempt).
  it('captures /stuck-subresource as it is when its load event never comes, marked X-Capture-Wait-Timed-Out and charged', async () => {
    const before = await service.client.usage();
    const response = await service.get(
      `/capture?${new URLSearchParams({ url: `${fixtures.url}/stuck-subresource`, viewportWidth: '200', viewportHeight: '150', apiKey: service.apiKey })}`,
    );
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-capture-wait-timed-out')).toBe('true');
    expect(response.headers.get('x-target-status')).toBe('200');
    expect(near(decodePng(new Uint8Array(await response.arrayBuffer())).pixel(100, 75), [200, 0, 0])).toBe(true);
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining - 1);
  });

  it('answers 504 CAPTURE_TIMEOUT for /stuck-subresource with failOnWaitTimeout=true, near the deadline, charging nothing', async () => {
    const before = await service.client.usage();
    const started = Date.now();
    const query = {
      url: `${fixtures.url}/stuck-subresource`,
      failOnWaitTimeout: 'true',
      viewportWidth: '200',
      viewportHeight: '150',
      apiKey: service.apiKey,
    };
    const response = await service.get(`/capture?${new URLSearchParams(query)}`);
    const elapsed = Date.now() - started;
    expect(response.status).toBe(504);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('CAPTURE_TIMEOUT');
    // The main document answered: its status is on the error answer too.
    expect(response.headers.get('x-target-status')).toBe('200');
    expect(elapsed).toBeGreaterThan(CAPTURE_TIMEOUT_MS - 1_000);
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
    await expectCaptureWorks();
  });

  it('lengthens the deadline by the delay the request asks for: a valid delay beyond CAPTURE_TIMEOUT_MS still answers 200', async () => {
    const started = Date.now();
    const response = await service.get(
      `/capture?${new URLSearchParams({ html: OK_PAGE, delay: '5000', viewportWidth: '200', viewportHeight: '150', apiKey: service.apiKey })}`,
    );
    expect(response.status, await response.clone().text()).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_000);
    const image = decodePng(new Uint8Array(await response.arrayBuffer()));
    expect(near(image.pixel(100, 75), [40, 160, 110])).toBe(true);
  });

  it('still ends a page that never finishes, at CAPTURE_TIMEOUT_MS plus the requested delay', async () => {
    const started = Date.now();
    const response = await service.get(
      `/capture?${new URLSearchParams({ url: `${fixtures.url}/never-finishes`, delay: '2000', apiKey: service.apiKey })}`,
    );
    const elapsed = Date.now() - started;
    expect(response.status).toBe(504);
    // The message names the deadline this request had, not the bare setting.
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(`${CAPTURE_TIMEOUT_MS + 2_000} ms`);
    expect(elapsed).toBeGreaterThan(CAPTURE_TIMEOUT_MS + 2_000 - 1_000);
    expect(elapsed).toBeLessThan(CAPTURE_TIMEOUT_MS + 2_000 + 4_000);
    await expectCaptureWorks();
  });
});

import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaptureResult } from '@daguerre/contract';
import { FixtureServer, registerFixtureAddress } from '../helpers/fixture-server.js';
import { dataUriBytes, decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const CAPTURE_TIMEOUT_MS = 6_000;
const GREEN = [0, 160, 0];
const BLUE = [0, 0, 200];
const small = { viewportWidth: '200', viewportHeight: '150' };

/** A loopback port with nothing listening on it (allowed by the test network policy like a fixture). */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  registerFixtureAddress(address);
  return address;
}

/**
 * What the page finally shows (docs/capture-fidelity.md): a page whose load never comes because one
 * third-party resource stalls is captured as it is (best attempt); navigations after load are
 * followed; a navigation that ends on the browser's error page is a failure naming host and error;
 * the target's status is on every answer where it is known.
 */
describe('capture fidelity: best attempt, followed navigations, unreachable targets', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let thirdParty: FixtureServer;
  let unreachable: string;

  beforeAll(async () => {
    thirdParty = await new FixtureServer().start();
    // A third-party script and image that send their headers and then nothing, forever: no load event.
    thirdParty.route('/stall.js', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/javascript' });
      res.write('// ');
    });
    thirdParty.route('/stall.png', (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }));
    fixtures = await new FixtureServer().start();
    unreachable = await closedPort();
    fixtures.page(
      '/stalled-third-party',
      `<!doctype html><title>Stalled</title><body style="margin:0;background:rgb(0,160,0)"><script async src="${thirdParty.url}/stall.js"></script><img src="${thirdParty.url}/stall.png" width="1" height="1"></body>`,
    );
    fixtures.page(
      '/redirect-on-load',
      `<!doctype html><title>Start</title><body style="margin:0;background:rgb(200,0,0)"><script>addEventListener('load', () => { location.href = '/landed?via=load'; });</script></body>`,
    );
    fixtures.page(
      '/redirect-while-parsing',
      `<!doctype html><title>Start</title><script>location.replace('/landed?via=parsing');</script><body style="margin:0;background:rgb(200,0,0)"></body>`,
    );
    fixtures.page(
      '/redirect-by-timer',
      `<!doctype html><body style="margin:0;background:rgb(200,0,0)"><script>addEventListener('load', () => setTimeout(() => { location.href = '/landed?via=timer'; }, 0));</script></body>`,
    );
    fixtures.page(
      '/navigate-to-no-content',
      `<!doctype html><body style="margin:0;background:rgb(0,160,0)"><script>addEventListener('load', () => { location.href = '/no-content'; });</script></body>`,
    );
    fixtures.route('/no-content', (_req, res) => res.writeHead(204).end());
    // Navigates away when the capture scrolls it: the document the scroll works on is destroyed under it.
    fixtures.page(
      '/navigate-on-scroll',
      `<!doctype html><body style="margin:0"><div style="height:3000px;background:rgb(200,0,0)"></div><script>addEventListener('scroll', () => { location.href = '/landed?via=scroll'; }, { once: true });</script></body>`,
    );
    fixtures.page('/landed', '<!doctype html><title>Landed</title><body style="margin:0;background:rgb(0,0,200)"><p>landed</p></body>');
    fixtures.page(
      '/redirect-to-missing',
      `<!doctype html><body style="background:rgb(200,0,0)"><script>addEventListener('load', () => { location.href = '/missing'; });</script></body>`,
    );
    fixtures.route('/missing', (_req, res) =>
      res.writeHead(404, { 'content-type': 'text/html' }).end('<title>Not here</title><body style="background:rgb(0,0,200)">404</body>'),
    );
    fixtures.page(
      '/redirect-to-unreachable',
      `<!doctype html><body style="background:rgb(200,0,0)"><script>addEventListener('load', () => { location.href = 'http://${unreachable}/gone'; });</script></body>`,
    );
    service = await startTestService({ env: { CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS), RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
    await thirdParty?.stop();
  });

  const get = (query: Record<string, string>) =>
    service.get(`/capture?${new URLSearchParams({ ...small, ...query, apiKey: service.apiKey })}`);
  const remaining = async () => (await service.client.usage()).credits.remaining;
  const centre = async (response: Response) => decodePng(new Uint8Array(await response.arrayBuffer())).pixel(100, 75);

  it('captures a page whose third-party resource stalls as it is: 200, X-Capture-Wait-Timed-Out, data.page.waitTimedOut, charged', async () => {
    const before = await remaining();
    const response = await get({ url: `${fixtures.url}/stalled-third-party` });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-capture-wait-timed-out')).toBe('true');
    expect(response.headers.get('x-target-status')).toBe('200');
    expect(near(await centre(response), GREEN)).toBe(true);
    expect(await remaining()).toBe(before - 1);

    const json = await get({ url: `${fixtures.url}/stalled-third-party`, returnFile: 'false' });
    const body = (await json.json()) as CaptureResult;
    expect(body.data.page).toMatchObject({ status: 200, title: 'Stalled', waitTimedOut: true });
    expect(near(decodePng(dataUriBytes(body.data.imageData!)).pixel(100, 75), GREEN)).toBe(true);
  });

  it('answers 504 CAPTURE_TIMEOUT for the same page with failOnWaitTimeout=true, with X-Target-Status, charging nothing', async () => {
    const before = await remaining();
    const response = await get({ url: `${fixtures.url}/stalled-third-party`, failOnWaitTimeout: 'true' });
    expect(response.status).toBe(504);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('CAPTURE_TIMEOUT');
    expect(response.headers.get('x-target-status')).toBe('200');
    expect(await remaining()).toBe(before);
  });

  it('marks a page that loaded in time as not timed out', async () => {
    const response = await get({ url: `${fixtures.url}/landed` });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-capture-wait-timed-out')).toBe('false');
  });

  it('follows a redirect made by a load handler: the destination is captured, with its URL and status', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const response = await get({ url: `${fixtures.url}/redirect-on-load` });
      expect(response.status, await response.clone().text()).toBe(200);
      expect(response.headers.get('x-final-url')).toBe(`${fixtures.url}/landed?via=load`);
      expect(response.headers.get('x-target-status')).toBe('200');
      expect(near(await centre(response), BLUE)).toBe(true);
    }
    // The destination is waited for with the same waitUntil.
    const idle = await get({ url: `${fixtures.url}/redirect-on-load`, waitUntil: 'networkidle0' });
    expect(idle.status, await idle.clone().text()).toBe(200);
    expect(idle.headers.get('x-final-url')).toBe(`${fixtures.url}/landed?via=load`);
    expect(near(await centre(idle), BLUE)).toBe(true);
    const json = (await (await get({ url: `${fixtures.url}/redirect-on-load`, returnFile: 'false' })).json()) as CaptureResult;
    expect(json.data.page).toMatchObject({
      status: 200,
      finalUrl: `${fixtures.url}/landed?via=load`,
      title: 'Landed',
      waitTimedOut: false,
    });
  });

  it('follows a redirect that a load handler sets on a zero-delay timer', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const response = await get({ url: `${fixtures.url}/redirect-by-timer` });
      expect(response.status, await response.clone().text()).toBe(200);
      expect(response.headers.get('x-final-url')).toBe(`${fixtures.url}/landed?via=timer`);
      expect(near(await centre(response), BLUE)).toBe(true);
    }
  });

  it('captures the page itself when its navigation after load ends without a document (204)', async () => {
    const response = await get({ url: `${fixtures.url}/navigate-to-no-content` });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-final-url')).toBe(`${fixtures.url}/navigate-to-no-content`);
    expect(response.headers.get('x-capture-wait-timed-out')).toBe('false');
    expect(near(await centre(response), GREEN)).toBe(true);
  });

  it('starts its steps again on the new page when the page navigates while being captured (no destroyed context)', async () => {
    const response = await get({ url: `${fixtures.url}/navigate-on-scroll`, fullPage: 'true', fullPageScroll: 'true' });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-final-url')).toBe(`${fixtures.url}/landed?via=scroll`);
    expect(near(await centre(response), BLUE)).toBe(true);
  });

  it('follows a redirect made while the first document is still parsing', async () => {
    const response = await get({ url: `${fixtures.url}/redirect-while-parsing` });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-final-url')).toBe(`${fixtures.url}/landed?via=parsing`);
    expect(near(await centre(response), BLUE)).toBe(true);
  });

  it('reports the status of the page it ends on: a load redirect to a 404 gives X-Target-Status 404, and a 502 with failOnHttpError', async () => {
    const captured = await get({ url: `${fixtures.url}/redirect-to-missing` });
    expect(captured.status).toBe(200);
    expect(captured.headers.get('x-target-status')).toBe('404');
    expect(captured.headers.get('x-final-url')).toBe(`${fixtures.url}/missing`);

    const before = await remaining();
    const failed = await get({ url: `${fixtures.url}/redirect-to-missing`, failOnHttpError: 'true' });
    expect(failed.status).toBe(502);
    const body = (await failed.json()) as { error: { code: string; details: { status: number } } };
    expect(body.error.code).toBe('TARGET_HTTP_ERROR');
    expect(body.error.details.status).toBe(404);
    expect(failed.headers.get('x-target-status')).toBe('404');
    expect(failed.headers.get('x-final-url')).toBe(`${fixtures.url}/missing`);
    expect(await remaining()).toBe(before);
  });

  it('puts X-Target-Status on a 502 for a target that answers 404 directly', async () => {
    const failed = await get({ url: `${fixtures.url}/missing`, failOnHttpError: 'true' });
    expect(failed.status).toBe(502);
    expect(failed.headers.get('x-target-status')).toBe('404');
  });

  it('fails a script redirect to an unreachable host, naming host and network error, with X-Final-Url of that address, charging nothing', async () => {
    const before = await remaining();
    const response = await get({ url: `${fixtures.url}/redirect-to-unreachable` });
    const body = (await response.json()) as { error: { code: string; message: string; details: { host: string; error: string } } };
    expect(response.status, JSON.stringify(body)).toBe(500);
    expect(body.error.code).toBe('OPERATION_FAILED');
    expect(body.error.message).toContain(unreachable);
    // The egress proxy knows why the connection failed (Chromium only sees a failed SOCKS connection).
    expect(body.error.message).toContain('net::ERR_CONNECTION_REFUSED');
    expect(body.error.details).toMatchObject({ host: unreachable, error: 'net::ERR_CONNECTION_REFUSED' });
    expect(response.headers.get('x-final-url')).toBe(`http://${unreachable}/gone`);
    expect(response.headers.get('content-type')).toMatch(/json/);
    expect(await remaining()).toBe(before);
  });

  it('fails a target that is unreachable from the start the same way', async () => {
    const response = await get({ url: `http://${unreachable}/first` });
    const body = (await response.json()) as { error: { message: string } };
    expect(response.status).toBe(500);
    expect(body.error.message).toContain(unreachable);
    expect(response.headers.get('x-final-url')).toBe(`http://${unreachable}/first`);
  });

  it('still captures a page that only changes its URL (pushState) after load', async () => {
    fixtures.page(
      '/push-state',
      `<!doctype html><body style="margin:0;background:rgb(0,160,0)"><script>addEventListener('load', () => history.pushState({}, '', '/pushed'));</script></body>`,
    );
    const response = await get({ url: `${fixtures.url}/push-state` });
    expect(response.status).toBe(200);
    expect(near(await centre(response), GREEN)).toBe(true);
  });
});

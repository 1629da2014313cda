import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * "The capture says what it saw" (docs/capture-fidelity.md): X-Target-Status, X-Final-Url and
 * X-Capture-Truncated on the file, `data.page` in JSON mode, the same on cache hits and in the
 * typed client.
 */
describe('capture page report: target status, final URL, title, size', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  const TALL =
    '<!doctype html><title>Tall page</title><body style="margin:0"><div style="width:100%;height:3000px;background:rgb(30,90,200)"></div></body>';

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.route('/missing', (_req, res) =>
      res.writeHead(404, { 'content-type': 'text/html' }).end('<title>Not here</title><h1>404</h1>'),
    );
    fixtures.route('/hop-1', (_req, res) => res.writeHead(302, { location: '/hop-2' }).end());
    fixtures.route('/hop-2', (_req, res) => res.writeHead(301, { location: '/landing?from=hops' }).end());
    fixtures.page('/landing', '<title>Landed</title><p>landed</p>');
    fixtures.page('/tall', TALL);
    fixtures.page('/box', '<body style="margin:0"><div id="box" style="margin:40px;width:321px;height:123px;background:red"></div></body>');
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  it('reports a 404 target with X-Target-Status: 404 and still returns the image (without failOnHttpError)', async () => {
    const url = `${fixtures.url}/missing`;
    const file = await service.client.capture({ url, viewportWidth: 400, viewportHeight: 300 });
    expect(file.contentType).toBe('image/png');
    expect(decodePng(file.bytes).width).toBe(400);
    expect(file.headers['x-target-status']).toBe('404');
    expect(file.targetStatus).toBe(404);
    expect(file.finalUrl).toBe(url);
    expect(file.truncated).toBe(false);
    expect(file.headers['x-capture-truncated']).toBe('false');
  });

  it('gives the URL after a chain of redirects and the status of the last hop', async () => {
    const file = await service.client.capture({ url: `${fixtures.url}/hop-1`, viewportWidth: 400, viewportHeight: 300 });
    expect(file.finalUrl).toBe(`${fixtures.url}/landing?from=hops`);
    expect(file.targetStatus).toBe(200);
    const json = await service.client.captureJson({ url: `${fixtures.url}/hop-1`, viewportWidth: 400, viewportHeight: 300 });
    expect(json.data.page).toEqual({
      status: 200,
      finalUrl: `${fixtures.url}/landing?from=hops`,
      title: 'Landed',
      width: 400,
      height: 300,
      truncated: false,
      waitTimedOut: false,
      stillGrowing: false,
      inspectionTimedOut: false,
    });
  });

  it('reports the title and the CSS size of the whole document for fullPage, of the element for clipSelector', async () => {
    const full = await service.client.captureJson({ url: `${fixtures.url}/tall`, fullPage: true, viewportWidth: 800, viewportHeight: 600 });
    expect(full.data.page).toEqual({
      status: 200,
      finalUrl: `${fixtures.url}/tall`,
      title: 'Tall page',
      width: 800,
      height: 3000,
      truncated: false,
      waitTimedOut: false,
      stillGrowing: false,
      inspectionTimedOut: false,
    });
    const element = await service.client.captureJson({
      url: `${fixtures.url}/box`,
      clipSelector: '#box',
      viewportWidth: 800,
      viewportHeight: 600,
    });
    expect(element.data.page).toMatchObject({ width: 321, height: 123, truncated: false, waitTimedOut: false, stillGrowing: false });
  });

  it('has no target status or final URL for inline html, in the headers or in data.page', async () => {
    const html = '<title>Inline</title><p>inline</p>';
    const response = await service.get(
      `/capture?html=${encodeURIComponent(html)}&viewportWidth=300&viewportHeight=200&apiKey=${service.apiKey}`,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-target-status')).toBeNull();
    expect(response.headers.get('x-final-url')).toBeNull();
    expect(response.headers.get('x-capture-truncated')).toBe('false');
    const json = await service.client.captureJson({ html, viewportWidth: 300, viewportHeight: 200 });
    expect(json.data.page).toEqual({
      status: null,
      finalUrl: null,
      title: 'Inline',
      width: 300,
      height: 200,
      truncated: false,
      waitTimedOut: false,
      stillGrowing: false,
      inspectionTimedOut: false,
    });
  });

  it('repeats the first capture report on a cache hit', async () => {
    const options = { url: `${fixtures.url}/missing`, viewportWidth: 320, viewportHeight: 240, cacheEnabled: true };
    const first = await service.client.capture(options);
    const second = await service.client.capture(options);
    expect(first.headers['x-cache']).toBe('MISS');
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.targetStatus).toBe(404);
    expect(second.finalUrl).toBe(options.url);
  });

  it('never shows credentials that a redirect wrote into the URL', async () => {
    // A target URL with credentials is refused up front; a redirect can still carry them.
    fixtures.route('/to-credentials', (_req, res) =>
      res.writeHead(302, { location: `${fixtures.url.replace('http://', 'http://reader:s3cret-pass@')}/landing` }).end(),
    );
    const json = await service.client.captureJson({ url: `${fixtures.url}/to-credentials`, viewportWidth: 300, viewportHeight: 200 });
    expect(json.data.page.finalUrl).toBe(`${fixtures.url}/landing`);
    const file = await service.client.capture({ url: `${fixtures.url}/to-credentials`, viewportWidth: 300, viewportHeight: 200 });
    expect(file.finalUrl).toBe(`${fixtures.url}/landing`);
    expect(JSON.stringify(file.headers)).not.toContain('s3cret-pass');
  });
});

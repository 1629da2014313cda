import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaptureResult } from '@daguerre/contract';
import { FixtureServer } from '../helpers/fixture-server.js';
import { dataUriBytes, decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const GREEN = [0, 160, 0];
const BLUE = [0, 0, 200];
const RED = [200, 0, 0];
const small = { viewportWidth: '200', viewportHeight: '150' };
/** Most navigations a capture follows after the first document (docs/capture-fidelity.md). */
const MAX_FOLLOWED = 10;

const body = (rgb: number[], extra = '') => `<body style="margin:0;background:rgb(${rgb.join(',')})">${extra}</body>`;
const doc = (head: string, rgb: number[], extra = '') => `<!doctype html><html><head>${head}</head>${body(rgb, extra)}</html>`;

/**
 * Redirect chains that go on after `load`: script timers, meta refresh and the HTTP Refresh header
 * of a few seconds are waited for and followed to the last page, whose status, headers and image
 * the capture is; a refresh to the page itself or one beyond the window is not waited for; a page
 * that keeps navigating stops at the bound; every hop is under the network policy. Each page starts
 * its navigation from its own first script: the test itself never races a timer.
 */
describe('redirect chains after load', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    // The chain of the report: a script timer 200 ms after load, then a meta refresh of 1 s.
    fixtures.page(
      '/a/start',
      doc(
        '<title>A start</title>',
        RED,
        `<script>addEventListener('load', () => setTimeout(() => { location.href = '/a/middle'; }, 200));</script>`,
      ),
    );
    fixtures.page('/a/middle', doc('<title>A middle</title><meta http-equiv="refresh" content="1; url=/a/final">', RED));
    fixtures.page('/a/final', doc('<title>A final</title>', BLUE), { 'x-fixture': 'a-final' });
    // HTTP 302, then a timer set while the page parses (location.replace), then the last page.
    fixtures.route('/b/start', (_req, res) => res.writeHead(302, { location: '/b/hop' }).end());
    fixtures.page(
      '/b/hop',
      doc('<title>B hop</title>', RED, `<script>setTimeout(function () { window.location.replace('/b/final'); }, 300);</script>`),
    );
    fixtures.page('/b/final', doc('<title>B final</title>', BLUE), { 'x-fixture': 'b-final' });
    // The HTTP Refresh header, then a form a script submits.
    fixtures.page('/c/start', doc('<title>C start</title>', RED), { refresh: '1; url=/c/form' });
    fixtures.page(
      '/c/form',
      doc(
        '<title>C form</title>',
        RED,
        `<form action="/c/final"><input name="q" value="sent"></form><script>addEventListener('load', () => setTimeout(() => document.forms[0].submit(), 150));</script>`,
      ),
    );
    fixtures.page('/c/final', doc('<title>C final</title>', BLUE));
    // Refreshes that are not followed: to the page itself, and one far beyond the window.
    fixtures.page('/self-refresh', doc('<title>Self</title><meta http-equiv="refresh" content="4">', GREEN));
    fixtures.page('/ping', doc('<title>Ping</title><meta http-equiv="refresh" content="1; url=/pong">', RED));
    fixtures.page('/pong', doc('<title>Pong</title><meta http-equiv="refresh" content="4; url=/ping">', GREEN));
    fixtures.page('/far-refresh', doc('<title>Far</title><meta http-equiv="refresh" content="30; url=/far-away">', GREEN));
    fixtures.page('/far-away', doc('<title>Far away</title>', RED));
    // Reloads itself at once, forever (as it would in any browser): the chain ends at the bound.
    fixtures.page('/reload-loop', doc('<title>Loop</title><meta http-equiv="refresh" content="0">', GREEN));
    // Sends itself on to a new address 100 ms after each load, forever.
    fixtures.route('/endless', (req, res) => {
      const n = Number(new URL(req.url!, 'http://fixture').searchParams.get('n') ?? 0);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        doc(
          `<title>Endless ${n}</title>`,
          GREEN,
          `<script>addEventListener('load', () => setTimeout(() => { location.href = '/endless?n=${n + 1}'; }, 100));</script>`,
        ),
      );
    });
    // A timer within the window that does not navigate: not waited for (it would paint the page red).
    fixtures.page(
      '/late-paint',
      doc(
        '<title>Late</title>',
        GREEN,
        `<script>addEventListener('load', () => setTimeout(() => { document.body.style.background = 'rgb(200,0,0)'; }, 4500));</script>`,
      ),
    );
    // Hops to addresses the network policy refuses.
    fixtures.page(
      '/to-private-by-timer',
      doc(
        '<title>To private</title>',
        GREEN,
        `<script>addEventListener('load', () => setTimeout(() => { location.href = 'http://10.0.0.1/admin'; }, 200));</script>`,
      ),
    );
    fixtures.page(
      '/to-metadata-by-refresh',
      doc('<title>To metadata</title><meta http-equiv="refresh" content="1; url=http://169.254.169.254/latest/meta-data/">', GREEN),
    );
    // One capture place: every capture runs on the same pooled page, so what one leaves on it shows in the next.
    // A page whose first script breaks setTimeout: the look for scheduled navigations must not hang on it.
    fixtures.page(
      '/broken-timers',
      doc('<title>Broken timers</title><script>window.setTimeout = function () { return 0; };</script>', GREEN),
    );
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000', MAX_CONCURRENCY: '1' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const get = (query: Record<string, string>) =>
    service.get(`/capture?${new URLSearchParams({ ...small, ...query, apiKey: service.apiKey })}`);
  const json = async (query: Record<string, string>) => {
    const response = await get({ ...query, returnFile: 'false', metadata: 'true' });
    const result = (await response.json()) as CaptureResult;
    expect(response.status, JSON.stringify(result)).toBe(200);
    return { response, result, centre: decodePng(dataUriBytes(result.data.imageData!)).pixel(100, 75) };
  };
  const centre = async (response: Response) => decodePng(new Uint8Array(await response.arrayBuffer())).pixel(100, 75);
  const remaining = async () => (await service.client.usage()).credits.remaining;

  it('follows a script timer 200 ms after load and then a meta refresh of 1 s to the last page', async () => {
    const response = await get({ url: `${fixtures.url}/a/start` });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-final-url')).toBe(`${fixtures.url}/a/final`);
    expect(response.headers.get('x-target-status')).toBe('200');
    expect(response.headers.get('x-capture-wait-timed-out')).toBe('false');
    expect(near(await centre(response), BLUE)).toBe(true);

    const { result, centre: jsonCentre } = await json({ url: `${fixtures.url}/a/start` });
    expect(near(jsonCentre, BLUE)).toBe(true);
    expect(result.data.page).toMatchObject({ status: 200, finalUrl: `${fixtures.url}/a/final`, title: 'A final' });
    expect(result.data.metadata!.httpStatus).toBe(200);
    expect(result.data.metadata!.httpHeaders['x-fixture']).toBe('a-final');
    expect(result.data.metadata!.redirects).toEqual([
      { url: `${fixtures.url}/a/start`, status: 200, via: 'script' },
      { url: `${fixtures.url}/a/middle`, status: 200, via: 'metaRefresh' },
    ]);
  });

  it("captures a page that replaced setTimeout at once: the capture's own turn does not use the page's timer", async () => {
    const response = await get({ url: `${fixtures.url}/broken-timers` });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-capture-wait-timed-out')).toBe('false');
    expect(near(await centre(response), GREEN)).toBe(true);
  });

  it('follows an HTTP 302, then a script hop, to the last page, whose headers the answer has', async () => {
    const { result, centre: jsonCentre } = await json({ url: `${fixtures.url}/b/start` });
    expect(near(jsonCentre, BLUE)).toBe(true);
    expect(result.data.page).toMatchObject({ status: 200, finalUrl: `${fixtures.url}/b/final`, title: 'B final' });
    expect(result.data.metadata!.httpHeaders['x-fixture']).toBe('b-final');
    expect(result.data.metadata!.redirects).toEqual([
      { url: `${fixtures.url}/b/start`, status: 302, via: 'http' },
      { url: `${fixtures.url}/b/hop`, status: 200, via: 'script' },
    ]);
  });

  it('follows the HTTP Refresh header and a form a script submits', async () => {
    const { result, centre: jsonCentre } = await json({ url: `${fixtures.url}/c/start` });
    expect(near(jsonCentre, BLUE)).toBe(true);
    expect(result.data.page.finalUrl).toBe(`${fixtures.url}/c/final?q=sent`);
    expect(result.data.metadata!.redirects).toEqual([
      { url: `${fixtures.url}/c/start`, status: 200, via: 'refreshHeader' },
      { url: `${fixtures.url}/c/form`, status: 200, via: 'form' },
    ]);
  });

  it('does not wait for a page that refreshes itself: it is captured as it is, without a loop', async () => {
    fixtures.reset();
    const { result, centre: jsonCentre } = await json({ url: `${fixtures.url}/self-refresh` });
    expect(near(jsonCentre, GREEN)).toBe(true);
    expect(result.data.page).toMatchObject({ finalUrl: `${fixtures.url}/self-refresh`, waitTimedOut: false });
    // Its refresh (4 s) is within the window: waiting for it would reload the page until the bound.
    expect(fixtures.requestsTo('/self-refresh')).toHaveLength(1);
    expect(result.data.metadata!.redirects).toEqual([]);
  });

  it('does not follow a refresh back to a page of the chain: two pages refreshing to each other end on the second', async () => {
    fixtures.reset();
    const { result, centre: jsonCentre } = await json({ url: `${fixtures.url}/ping` });
    expect(near(jsonCentre, GREEN)).toBe(true);
    expect(result.data.page.finalUrl).toBe(`${fixtures.url}/pong`);
    expect(result.data.metadata!.redirects).toEqual([{ url: `${fixtures.url}/ping`, status: 200, via: 'metaRefresh' }]);
    // Following it (4 s, within the window) would go back and forth until the bound.
    expect(fixtures.requestsTo('/ping')).toHaveLength(1);
  });

  it('does not wait for a meta refresh beyond the window: the page is captured as it is', async () => {
    fixtures.reset();
    const response = await get({ url: `${fixtures.url}/far-refresh` });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-final-url')).toBe(`${fixtures.url}/far-refresh`);
    expect(near(await centre(response), GREEN)).toBe(true);
    expect(fixtures.requestsTo('/far-away')).toEqual([]);
  });

  it('does not wait for a timer that does not navigate', async () => {
    const response = await get({ url: `${fixtures.url}/late-paint` });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(near(await centre(response), GREEN)).toBe(true);
  });

  it('ends the chain of a page that reloads itself at once at the bound, and captures what is there', async () => {
    fixtures.reset();
    const before = await remaining();
    const response = await get({ url: `${fixtures.url}/reload-loop` });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-final-url')).toBe(`${fixtures.url}/reload-loop`);
    expect(near(await centre(response), GREEN)).toBe(true);
    // The first load, the followed reloads, and at most the ones under way when the chain ended.
    expect(fixtures.requestsTo('/reload-loop').length).toBeLessThanOrEqual(MAX_FOLLOWED + 3);
    expect(await remaining()).toBe(before - 1);
    // The page that was held is the next capture's: its navigations are followed again.
    const next = await get({ url: `${fixtures.url}/b/start` });
    expect(next.status, await next.clone().text()).toBe(200);
    expect(next.headers.get('x-final-url')).toBe(`${fixtures.url}/b/final`);
  });

  it('ends a chain that never ends at the bound, on the page reached there', async () => {
    fixtures.reset();
    const { result } = await json({ url: `${fixtures.url}/endless?n=0` });
    const reached = Number(new URL(result.data.page.finalUrl!).searchParams.get('n'));
    expect(reached).toBeGreaterThanOrEqual(MAX_FOLLOWED);
    // At most the one under way when the chain ended, and one more that had begun before it was held.
    expect(reached).toBeLessThanOrEqual(MAX_FOLLOWED + 2);
    expect(result.data.metadata!.redirects).toHaveLength(reached);
    expect(result.data.metadata!.redirects.every((hop) => hop.via === 'script')).toBe(true);
    expect(fixtures.requestsTo('/endless').length).toBeLessThanOrEqual(MAX_FOLLOWED + 3);
  });

  it('refuses a script hop or a meta refresh to an address the network policy refuses (400), charging nothing', async () => {
    for (const path of ['/to-private-by-timer', '/to-metadata-by-refresh']) {
      const before = await remaining();
      const response = await get({ url: `${fixtures.url}${path}` });
      const answer = (await response.json()) as { error: { code: string; message: string; details: Array<{ field: string }> } };
      expect(response.status, `${path}: ${JSON.stringify(answer)}`).toBe(400);
      expect(answer.error.code).toBe('INVALID_INPUT');
      expect(answer.error.message).toContain('the destination is not allowed');
      expect(answer.error.details[0]!.field).toBe('url');
      expect(await remaining()).toBe(before);
    }
  });
});

import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

const GREEN: [number, number, number] = [40, 160, 110];

/**
 * Between two captures the kept page holds the previous document, frozen, until the next
 * navigation replaces it (parked-page.ts); once nothing renders, the pool replaces it with
 * about:blank instead. One slot (MAX_CONCURRENCY=1, no spare), and each second
 * capture queued behind the first, so that it finds the first one's page parked.
 */
describe('a kept page between two captures (parked, then replaced)', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  /** The slow response of the writer page, held until the test lets it go. */
  let slowResponse: ServerResponse | undefined;
  let slowAborted = false;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    // Hostile from its first script: writes a cookie and storage every millisecond, and has a
    // request out whose answer would set a cookie whenever it comes.
    fixtures.page(
      '/parked/writer.html',
      `<!doctype html><html><body style="margin:0;background:rgb(${GREEN.join(',')})"><script>
        setInterval(() => { document.cookie = 'late=' + Date.now() + '; path=/'; localStorage.setItem('late', String(Date.now())); }, 1);
        fetch('/parked/slow-cookie').catch(() => undefined);
      </script></body></html>`,
    );
    fixtures.route('/parked/slow-cookie', (req, res) => {
      slowResponse = res;
      req.socket.once('close', () => (slowAborted = !res.writableEnded));
    });
    fixtures.page(
      '/parked/reader.html',
      `<!doctype html><html><body><script>
        new Image().src = '/report?tag=parked-reader&cookie=' + encodeURIComponent(document.cookie) + '&late=' + String(localStorage.getItem('late')) + '&history=' + history.length;
      </script></body></html>`,
    );
    fixtures.page(
      '/parked/green.html',
      `<!doctype html><html><body style="margin:0;background:rgb(${GREEN.join(',')})">green</body></html>`,
    );
    // Says how visible it was at its first script and at its first animation frame.
    fixtures.page(
      '/parked/visible.html',
      `<!doctype html><html><body><script>
        const first = document.visibilityState;
        requestAnimationFrame(() => { new Image().src = '/report?tag=parked-visible&first=' + first + '&frame=' + document.visibilityState; });
      </script></body></html>`,
    );
    fixtures.route('/parked/no-content', (_req, res) => res.writeHead(204).end());
    service = await startTestService({ env: { MAX_CONCURRENCY: '1', RATE_LIMIT_MAX: '1000', SPARE_CONTEXTS: '0' } });
  });
  afterAll(async () => {
    slowResponse?.end();
    await service?.stop();
    await fixtures?.stop();
  });

  type Capture = Parameters<TestService['client']['capture']>[0];

  /**
   * Captures `second` queued behind `first` on the one slot. Another capture is then waiting when
   * the first ends, so its page is parked and left frozen, and the second capture's navigation
   * replaces the frozen document (with nothing waiting, the pool would replace it with about:blank).
   */
  async function queuedBehind(first: Capture, second: Capture, direct = true) {
    // What the browser's tab showed, in order: the second page must follow the first directly.
    const browser = await service.runtime.browser.get();
    const shown: string[] = [];
    const onChange = (target: { type(): string; url(): string }) => {
      if (target.type() === 'page') shown.push(target.url());
    };
    browser.on('targetchanged', onChange);
    try {
      const firstCapture = service.client.capture(first);
      await fixtures.waitForRequest(new URL(first.url!).pathname, 10_000);
      const secondCapture = service.client.capture(second).catch((error: unknown) => error);
      const results = [await firstCapture, await secondCapture] as const;
      const firstShown = shown.lastIndexOf(first.url!);
      expect(firstShown, shown.join(' ')).toBeGreaterThanOrEqual(0);
      if (direct) expect(shown.slice(firstShown + 1)[0], shown.join(' ')).not.toBe('about:blank');
      return results;
    } finally {
      browser.off('targetchanged', onChange);
    }
  }

  it('runs nothing of the previous page after the reset: no timer and no late answer leaves state for the next capture', async () => {
    fixtures.reset();
    await queuedBehind(
      { url: `${fixtures.url}/parked/writer.html`, viewportWidth: 300, viewportHeight: 200 },
      { url: `${fixtures.url}/parked/reader.html`, viewportWidth: 300, viewportHeight: 200, waitUntil: 'networkidle0' },
    );
    // The page's loads are stopped when it is parked: its request never got the answer.
    await until(() => (slowAborted ? true : undefined), 10_000, 'the writer page’s pending request to be cancelled');
    // The writer's pushed entries are gone; the tab's history is reset to the reader alone once it
    // commits (1), which a document in a new renderer process may read just before (2).
    const reader = fixtures.reports('parked-reader')[0]!;
    expect(reader).toMatchObject({ tag: 'parked-reader', cookie: '', late: 'null' });
    expect(['1', '2']).toContain(reader.history);
  });

  it('shows the next document as a visible page with animation frames', async () => {
    fixtures.reset();
    const visible: Capture = {
      url: `${fixtures.url}/parked/visible.html`,
      viewportWidth: 300,
      viewportHeight: 200,
      waitUntil: 'networkidle0',
    };
    await queuedBehind(visible, visible);
    // A document that commits in a new renderer process may start hidden and is shown right after
    // its commit; either way it gets animation frames (lazy images and scroll handlers need them)
    // while it is visible.
    expect(fixtures.reports('parked-visible').map((report) => report.frame)).toEqual(['visible', 'visible']);
  });

  it('never shows the previous page when the next navigation ends without a document (204)', async () => {
    fixtures.reset();
    const [green, result] = await queuedBehind(
      { url: `${fixtures.url}/parked/green.html`, viewportWidth: 300, viewportHeight: 200 },
      { url: `${fixtures.url}/parked/no-content`, viewportWidth: 300, viewportHeight: 200 },
      false,
    );
    expect(near(decodePng(green.bytes).pixel(150, 100), GREEN)).toBe(true);
    if (result instanceof Error) {
      expect(result.message).toMatch(/could not be loaded|no content|document/i);
    } else {
      const image = decodePng((result as { bytes: Buffer }).bytes);
      expect(near(image.pixel(150, 100), GREEN)).toBe(false);
    }
  });

  it('loads the page again when the next address differs only by its #fragment', async () => {
    fixtures.reset();
    const [, again] = await queuedBehind(
      { url: `${fixtures.url}/parked/green.html`, viewportWidth: 300, viewportHeight: 200 },
      { url: `${fixtures.url}/parked/green.html#part`, viewportWidth: 300, viewportHeight: 200 },
      // Replaced with about:blank first: a same-document navigation would keep the frozen page.
      false,
    );
    expect(near(decodePng((again as { bytes: Buffer }).bytes).pixel(150, 100), GREEN)).toBe(true);
    // A same-document navigation would have kept the frozen page: the server saw two loads.
    expect(fixtures.requestsTo('/parked/green.html')).toHaveLength(2);
  });

  it('switches to a touch device after a desktop capture on the same page', async () => {
    fixtures.reset();
    const [, phone] = await queuedBehind(
      { url: `${fixtures.url}/parked/green.html`, viewportWidth: 300, viewportHeight: 200 },
      { url: `${fixtures.url}/parked/green.html`, device: 'iphone-14', scaleFactor: 1 },
      // Replaced with about:blank first: puppeteer reloads the page when touch emulation changes.
      false,
    );
    const image = decodePng((phone as { bytes: Buffer }).bytes);
    expect(image.width).toBeLessThan(500);
    expect(near(image.pixel(10, 10), GREEN)).toBe(true);
  });
});

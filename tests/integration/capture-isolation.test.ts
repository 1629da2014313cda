import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/** Every file below `dir` (to `depth` levels) whose name contains `marker`. */
function filesNamed(dir: string, marker: string, depth: number): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.name.includes(marker)) found.push(path);
    if (entry.isDirectory() && depth > 0) {
      try {
        found.push(...filesNamed(path, marker, depth - 1));
      } catch {
        // unreadable directories of other processes
      }
    }
  }
  return found;
}

/** The Chromium profile directories of this machine's test services (daguerre-chromium-*). */
function chromiumProfiles(): string[] {
  return readdirSync(tmpdir())
    .filter((name) => name.startsWith('daguerre-chromium-'))
    .map((name) => join(tmpdir(), name))
    .filter((path) => statSync(path).isDirectory());
}

/**
 * One slot (MAX_CONCURRENCY=1), so every capture reuses the same browser context after its reset:
 * nothing of one capture may be visible to the next.
 */
describe('capture isolation on a reused context, dialogs, popups and downloads', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.route('/isolation/cacheable.js', (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'application/javascript', 'cache-control': 'public, max-age=86400' })
        .end('window.cacheableLoaded = true;');
    });
    fixtures.route('/isolation/sw-probe', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('from-network');
    });
    fixtures.route('/isolation/download.bin', (_req, res) => {
      res
        .writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-disposition': 'attachment; filename="daguerre-fixture-attachment.bin"',
        })
        .end('daguerre fixture download');
    });
    // No spare context: the checks below count the pool's contexts and pages.
    service = await startTestService({ env: { MAX_CONCURRENCY: '1', RATE_LIMIT_MAX: '1000', SPARE_CONTEXTS: '0' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const contextIds = async () =>
    (await service.runtime.browser.get())
      .browserContexts()
      .map((context) => context.id)
      .filter(Boolean);

  it('shows a capture none of the cookies, storage, IndexedDB, caches, service workers, permissions or history of the previous one', async () => {
    const contextsBefore = await contextIds();
    expect(contextsBefore).toHaveLength(1);
    // What a reader sees on a context nothing ran in before.
    await service.client.capture({
      url: `${fixtures.url}/isolation/reader.html`,
      waitForSelector: '#done',
      viewportWidth: 300,
      viewportHeight: 200,
    });
    const pristine = fixtures.reports('reader')[0]!;
    expect(pristine).toMatchObject({ cookie: '', local: '0', windowName: '' });

    fixtures.reset();
    await service.client.capture({
      url: `${fixtures.url}/isolation/writer.html`,
      latitude: 52.52,
      longitude: 13.405,
      waitForSelector: '#done',
      viewportWidth: 300,
      viewportHeight: 200,
    });
    const written = fixtures.reports('writer')[0]!;
    // The writer really left each kind of state behind.
    expect(written).toMatchObject({
      cookie: 'true',
      local: 'true',
      session: 'true',
      idb: 'true',
      cacheStorage: 'true',
      serviceWorker: 'true',
      geolocation: 'granted',
    });
    expect(fixtures.requestsTo('/isolation/cacheable.js')).toHaveLength(1);

    await service.client.capture({
      url: `${fixtures.url}/isolation/reader.html`,
      waitForSelector: '#done',
      viewportWidth: 300,
      viewportHeight: 200,
    });
    const seen = fixtures.reports('reader')[0]!;
    // The writer pushed an entry onto its history: none of it is left. A kept page's history holds
    // the capture's document alone; a new page's also holds the about:blank it opened with.
    expect(Number(seen.historyLength)).toBeLessThanOrEqual(Number(pristine.historyLength));
    expect(seen).toEqual({
      tag: 'reader',
      cookie: '',
      local: '0',
      session: '0',
      idb: '',
      cacheStorage: '',
      serviceWorkers: '0',
      controlled: 'false',
      swProbe: 'from-network',
      geolocation: 'prompt',
      windowName: '',
      historyLength: seen.historyLength,
      referrer: '',
    });
    // The HTTP cache was emptied too: the long-lived script was fetched again.
    expect(fixtures.requestsTo('/isolation/cacheable.js')).toHaveLength(2);
    // The reader ran in the same, reused context: the reset is what kept them apart.
    expect(await contextIds()).toEqual(contextsBefore);
  });

  it('keeps isolation when the second capture is inline html on the same origin-less page', async () => {
    fixtures.reset();
    await service.client.capture({
      url: `${fixtures.url}/isolation/writer.html`,
      waitForSelector: '#done',
      viewportWidth: 300,
      viewportHeight: 200,
    });
    // html mode cannot read the fixture origin's storage; it can try history and window.name.
    const html = `<script>new Image().src='${fixtures.url}/report?tag=html-reader&name='+encodeURIComponent(window.name)+'&history='+history.length;</script>`;
    await service.client.capture({ html, viewportWidth: 300, viewportHeight: 200, waitUntil: 'networkidle0' });
    // The writer pushed a second entry onto its history: none of it is left. The data: document may
    // commit in a new renderer process and read history.length before the tab's history is reset to
    // it alone (1), or just after its commit beside the entry it replaced (2).
    const htmlReader = fixtures.reports('html-reader')[0]!;
    expect(htmlReader).toMatchObject({ tag: 'html-reader', name: '' });
    expect(['1', '2']).toContain(htmlReader.history);
    await service.client.capture({
      url: `${fixtures.url}/isolation/reader.html`,
      waitForSelector: '#done',
      viewportWidth: 300,
      viewportHeight: 200,
    });
    expect(fixtures.reports('reader')[0]).toMatchObject({
      cookie: '',
      local: '0',
      session: '0',
      idb: '',
      serviceWorkers: '0',
      swProbe: 'from-network',
    });
  });

  it.each([
    // Another port on the same host: another origin, the same site, so the iframe's storage is the
    // origin's own, and only the iframe's navigation names that origin.
    ['of another origin on the same site', '127.0.0.1'],
    // Another loopback address is another site: the iframe's storage is partitioned under the top
    // document's site, a storage key of its own that clearing the origin does not reach.
    ['of another site (partitioned storage)', '127.0.0.2'],
  ])('clears the storage an iframe %s wrote, though its origin never loaded the top document', async (_kind, host) => {
    const other = await new FixtureServer().start(host);
    try {
      const frameScript = (body: string) =>
        `<!doctype html><script>(async () => {${body}})().then((m) => parent.postMessage(m, '*'));</script>`;
      other.route('/isolation/frame-writer.html', (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end(
          frameScript(`localStorage.setItem('leak', 'frame');
            await new Promise((done) => { const open = indexedDB.open('frame-leak', 1); open.onupgradeneeded = () => open.result.createObjectStore('s'); open.onsuccess = () => { open.result.close(); done(); }; open.onerror = done; });
            return 'local=' + localStorage.length + '&idb=' + (await indexedDB.databases()).map((db) => db.name).join(',');`),
        );
      });
      other.route('/isolation/frame-reader.html', (_req, res) => {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            frameScript(`return 'local=' + localStorage.length + '&idb=' + (await indexedDB.databases()).map((db) => db.name).join(',');`),
          );
      });
      // The top document reports what its iframe said, then marks itself done.
      fixtures.route('/isolation/frame-host.html', (req, res) => {
        const params = new URL(req.url!, fixtures.url).searchParams;
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><body><script>
          addEventListener('message', (event) => {
            const beacon = new Image();
            beacon.onload = beacon.onerror = () => { const el = document.createElement('div'); el.id = 'done'; document.body.appendChild(el); };
            beacon.src = '/report?tag=${params.get('tag')}&' + event.data;
          });
        </script><iframe src="${other.url}/isolation/${params.get('frame')}.html"></iframe></body>`);
      });
      const capture = (frame: string, tag: string) =>
        service.client.capture({
          url: `${fixtures.url}/isolation/frame-host.html?frame=${frame}&tag=${tag}`,
          waitForSelector: '#done',
          viewportWidth: 300,
          viewportHeight: 200,
        });
      fixtures.reset();
      const contextsBefore = await contextIds();
      await capture('frame-writer', 'frame-writer');
      // The iframe really wrote to its origin's storage.
      expect(fixtures.reports('frame-writer')[0]).toMatchObject({ local: '1', idb: 'frame-leak' });
      await capture('frame-reader', 'frame-reader');
      expect(fixtures.reports('frame-reader')[0]).toMatchObject({ local: '0', idb: '' });
      // The reset cleared it: the context was kept (a failed reset replaces the context, which would clear it too).
      expect(await contextIds()).toEqual(contextsBefore);
    } finally {
      await other.stop();
    }
  });

  it('does not hang on alert, confirm and prompt while the page loads', async () => {
    const started = Date.now();
    const image = decodePng(
      (await service.client.capture({ url: `${fixtures.url}/isolation/dialogs.html`, viewportWidth: 200, viewportHeight: 150 })).bytes,
    );
    expect(near(image.pixel(100, 75), [40, 160, 110])).toBe(true);
    // A dialog left open would hold the capture until its 20 s deadline.
    expect(Date.now() - started).toBeLessThan(10_000);
    // The page's beforeunload handler does not block the reset either: the next capture works.
    const next = decodePng(
      (
        await service.client.capture({
          html: '<body style="margin:0;background:rgb(10,20,30)"></body>',
          viewportWidth: 200,
          viewportHeight: 150,
        })
      ).bytes,
    );
    expect(near(next.pixel(100, 75), [10, 20, 30])).toBe(true);
  });

  it('opens no windows: window.open returns null and no popup reaches the server', async () => {
    fixtures.reset();
    await service.client.capture({ url: `${fixtures.url}/isolation/popup.html`, viewportWidth: 200, viewportHeight: 150 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fixtures.reports('popup')[0]?.opened).toBe('false');
    expect(fixtures.requestsTo('/isolation/popup-target.html')).toHaveLength(0);
    // The capture contexts hold only the pool's one page.
    const contexts = (await service.runtime.browser.get()).browserContexts().filter((context) => context.id);
    const pages = (await Promise.all(contexts.map((context) => context.pages()))).flat();
    expect(pages).toHaveLength(1);
  });

  it('writes no file for downloads started by the page', async () => {
    const markers = ['daguerre-fixture-download', 'daguerre-fixture-blob', 'daguerre-fixture-attachment'];
    const places = () =>
      markers.flatMap((marker) => [
        ...chromiumProfiles().flatMap((profile) => filesNamed(profile, marker, 6)),
        ...filesNamed(join(homedir(), 'Downloads'), marker, 2),
        ...filesNamed(tmpdir(), marker, 1),
        ...filesNamed(process.cwd(), marker, 0),
      ]);
    expect(places()).toEqual([]);
    fixtures.reset();
    await service.client.capture({ url: `${fixtures.url}/isolation/download.html`, viewportWidth: 200, viewportHeight: 150, delay: 500 });
    // A capture of the download URL itself fails (the browser will not navigate to an attachment) and writes nothing either.
    const direct = await service.get(
      `/capture?${new URLSearchParams({ url: `${fixtures.url}/isolation/download.bin`, apiKey: service.apiKey })}`,
    );
    expect(direct.status).toBeGreaterThanOrEqual(400);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(places()).toEqual([]);
  });
});

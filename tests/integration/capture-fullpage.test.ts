import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaguerreError } from '../../client/src/index.js';
import { MAX_OUTPUT_HEIGHT_PX, MAX_OUTPUT_WIDTH_PX, MAX_SINGLE_PDF_HEIGHT_PX } from '../../server/src/capture/renderer.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near, pdfPages } from '../helpers/images.js';
import sharp from 'sharp';
import { startTestService, type TestService } from '../helpers/test-service.js';

/** Colour of band i of tall.html (the same function as in the page). */
const bandColour = (i: number) => [(i * 67 + 40) % 256, (i * 139 + 90) % 256, (i * 29 + 160) % 256];
const LONG_BANDS = [
  [200, 40, 40],
  [40, 200, 40],
  [40, 40, 200],
  [200, 200, 40],
  [40, 200, 200],
  [200, 40, 200],
];
/** A4 is 595 × 842 pt; Chromium rounds the page to whole device pixels, so allow one point. */
const isA4 = (size: { width: number; height: number }) => Math.abs(size.width - 595) <= 1.2 && Math.abs(size.height - 842) <= 1.2;

async function failure(promise: Promise<unknown>): Promise<DaguerreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DaguerreError);
  return error as DaguerreError;
}

describe('full-page captures, lazy content, clipping and pdf layouts', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  const lazyRequests = () => fixtures.requestsTo('/img/swatch.png').filter((r) => r.path.includes('lazy=')).length;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  it('captures the whole document with fullPage: exactly its height × scale', async () => {
    const url = `${fixtures.url}/long.html`;
    const viewport = await service.client.capture({ url, viewportWidth: 800, viewportHeight: 600 });
    expect([decodePng(viewport.bytes).width, decodePng(viewport.bytes).height]).toEqual([800, 600]);

    const full = decodePng((await service.client.capture({ url, viewportWidth: 800, viewportHeight: 600, fullPage: true })).bytes);
    expect([full.width, full.height]).toEqual([800, 3000]);
    for (const [i, colour] of LONG_BANDS.entries()) expect(near(full.pixel(400, i * 500 + 250), colour), `band ${i}`).toBe(true);

    const scaled = decodePng(
      (await service.client.capture({ url, viewportWidth: 400, viewportHeight: 300, fullPage: true, scaleFactor: 2 })).bytes,
    );
    expect([scaled.width, scaled.height]).toEqual([800, 6000]);
    expect(near(scaled.pixel(400, 5990), LONG_BANDS[5]!)).toBe(true);
  });

  it('loads lazy images with fullPageScroll, returns to the top, and loads fewer without it', async () => {
    const url = `${fixtures.url}/lazy.html`;
    fixtures.reset();
    const plain = decodePng((await service.client.capture({ url, viewportWidth: 800, viewportHeight: 600, fullPage: true })).bytes);
    const withoutScroll = lazyRequests();
    // Never scrolled: the marker at the top keeps its initial blue.
    expect(near(plain.pixel(10, 10), [0, 0, 255])).toBe(true);

    fixtures.reset();
    const scrolled = decodePng(
      (
        await service.client.capture({
          url,
          viewportWidth: 800,
          viewportHeight: 600,
          fullPage: true,
          fullPageScroll: true,
          fullPageScrollDuration: 800,
        })
      ).bytes,
    );
    expect(lazyRequests()).toBe(30);
    expect(withoutScroll).toBeLessThan(30);
    // Scrolled away (red) and back to the top (green) before the capture.
    expect(near(scrolled.pixel(10, 10), [0, 160, 0])).toBe(true);
    // The loaded images are painted: the last one sits at 3100 + 29 × 400 px.
    expect(scrolled.height).toBe(3100 + 30 * 400);
    expect(near(scrolled.pixel(150, 3100 + 29 * 400 + 150), [30, 90, 220])).toBe(true);
  });

  it('stitches a 30 000 px page whole in png and jpeg, and 60 000 device px at scale 2, with every band in place', async () => {
    const url = `${fixtures.url}/tall.html`;
    const file = await service.client.capture({ url, viewportWidth: 400, viewportHeight: 600, fullPage: true });
    const image = decodePng(file.bytes);
    expect([image.width, image.height]).toEqual([400, 30_000]);
    // Every band, including those past the old 16 383 px cut, has the page's colour at that position,
    // near both of its edges too (no shifted or repeated strips at tile joins).
    for (let band = 0; band < 30; band++) {
      for (const y of [band * 1000 + 3, band * 1000 + 500, band * 1000 + 996])
        expect(near(image.pixel(200, y), bandColour(band)), `y=${y}`).toBe(true);
    }
    const jpeg = await service.client.capture({ url, viewportWidth: 400, viewportHeight: 600, fullPage: true, format: 'jpeg' });
    const decoded = await sharp(Buffer.from(jpeg.bytes)).raw().toBuffer({ resolveWithObject: true });
    expect([decoded.info.width, decoded.info.height]).toEqual([400, 30_000]);
    const at = (y: number) => [
      ...decoded.data.subarray((y * 400 + 200) * decoded.info.channels, (y * 400 + 200) * decoded.info.channels + 3),
    ];
    for (let band = 0; band < 30; band++) expect(near(at(band * 1000 + 500), bandColour(band), 20), `jpeg band ${band}`).toBe(true);
    // At scale 2: 60 000 device px.
    const scaled = decodePng(
      (await service.client.capture({ url, viewportWidth: 200, viewportHeight: 300, fullPage: true, scaleFactor: 2 })).bytes,
    );
    expect([scaled.width, scaled.height]).toEqual([400, 60_000]);
    for (let band = 0; band < 30; band++)
      expect(near(scaled.pixel(200, band * 2000 + 1000), bandColour(band)), `scaled band ${band}`).toBe(true);
    expect(near(scaled.pixel(200, 59_997), bandColour(29))).toBe(true);
  });

  it('shows a fixed header once at the top of a stitched page, not at every tile', async () => {
    const html =
      '<body style="margin:0;background:rgb(40,40,200)"><div style="position:fixed;top:0;left:0;right:0;height:50px;background:rgb(200,40,40)"></div><div style="height:20000px"></div></body>';
    const image = decodePng((await service.client.capture({ html, viewportWidth: 400, viewportHeight: 600, fullPage: true })).bytes);
    expect([image.width, image.height]).toEqual([400, 20_000]);
    expect(near(image.pixel(200, 10), [200, 40, 40])).toBe(true);
    for (let y = 100; y < 20_000; y += 250) expect(near(image.pixel(200, y), [40, 40, 200]), `y=${y}`).toBe(true);
  });

  it('paints the fixed header at the top even when the page opened at an anchor with smooth scrolling', async () => {
    // Found by helper-14's stitching tests: the page still glides to #deep after load, so one
    // scroll to the top was undone and the header was painted mid-page.
    fixtures.page(
      '/anchored.html',
      '<html style="scroll-behavior:smooth"><body style="margin:0;background:rgb(40,40,200)"><div style="position:fixed;top:0;left:0;right:0;height:50px;background:rgb(200,40,40)"></div><div style="height:20000px"></div><a id="deep" style="position:absolute;top:15000px">deep</a></body></html>',
    );
    const image = decodePng(
      (await service.client.capture({ url: `${fixtures.url}/anchored.html#deep`, viewportWidth: 400, viewportHeight: 600, fullPage: true }))
        .bytes,
    );
    expect([image.width, image.height]).toEqual([400, 20_000]);
    expect(near(image.pixel(200, 10), [200, 40, 40])).toBe(true);
    for (let y = 100; y < 20_000; y += 250) expect(near(image.pixel(300, y), [40, 40, 200]), `y=${y}`).toBe(true);
  });

  it('cuts a page past the 100 000 px budget and says so with X-Capture-Truncated', async () => {
    const small = await service.get(
      `/capture?html=${encodeURIComponent('<body>hi</body>')}&viewportWidth=120&viewportHeight=100&apiKey=${service.apiKey}`,
    );
    expect(small.status).toBe(200);
    expect(small.headers.get('x-capture-truncated')).toBe('false');
    const html = '<body style="margin:0;background:rgb(40,200,40)"><div style="height:120000px"></div></body>';
    const cut = await service.get(
      `/capture?html=${encodeURIComponent(html)}&fullPage=true&viewportWidth=100&viewportHeight=100&apiKey=${service.apiKey}`,
    );
    expect(cut.status).toBe(200);
    expect(cut.headers.get('x-capture-truncated')).toBe('true');
    const image = decodePng(new Uint8Array(await cut.arrayBuffer()));
    expect([image.width, image.height]).toEqual([100, 100_000]);
    expect(near(image.pixel(50, 99_990), [40, 200, 40])).toBe(true);
  });

  it(`keeps every output within ${MAX_OUTPUT_WIDTH_PX}×${MAX_OUTPUT_HEIGHT_PX} px per frame: png cut and said so, a WebP past it refused, never shortened`, async () => {
    // A viewport wider than the limit at this scale, a document wider than it, an element taller than it.
    const wide = {
      html: '<body style="margin:0;background:rgb(200,40,40)"></body>',
      viewportWidth: 6000,
      viewportHeight: 200,
      scaleFactor: 3,
    };
    // png: cut to one frame and said so; webp: refused, never shortened (docs/capture-fidelity.md).
    const wideViewport = await service.client.capture({ ...wide, format: 'png' });
    expect([decodePng(wideViewport.bytes).width, decodePng(wideViewport.bytes).height]).toEqual([MAX_OUTPUT_WIDTH_PX, 600]);
    expect(wideViewport.truncated).toBe(true);
    const wideWebp = await failure(service.client.capture({ ...wide, format: 'webp' }));
    expect([wideWebp.status, wideWebp.code]).toEqual([400, 'INVALID_INPUT']);
    expect(wideWebp.message).toContain('18000×600');
    // A full page past the WebP limit is refused by name, with the page's size, and charges nothing.
    const before = (await service.client.usage()).credits.usedThisPeriod;
    const refused = await failure(
      service.client.capture({
        html: '<body style="margin:0"><div style="width:20000px;height:500px;background:rgb(40,40,200)"></div></body>',
        format: 'webp',
        fullPage: true,
        viewportWidth: 400,
        viewportHeight: 300,
      }),
    );
    expect(refused.status).toBe(400);
    expect(refused.code).toBe('INVALID_INPUT');
    expect(refused.message).toContain('16383');
    expect(refused.message).toContain('20000×500');
    expect(refused.message).toContain('png or jpeg');
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(before);
    const tallElement = await failure(
      service.client.capture({
        html: '<body style="margin:0"><div id="tall" style="width:100px;height:20000px;background:rgb(40,200,40)"></div></body>',
        format: 'webp',
        clipSelector: '#tall',
        viewportWidth: 400,
        viewportHeight: 300,
      }),
    );
    expect([tallElement.status, tallElement.code]).toEqual([400, 'INVALID_INPUT']);
    expect(tallElement.message).toContain('100×20000');
    expect(tallElement.message).toContain('clipSelector');
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(before);
  });

  it('captures only the element of clipSelector, and names the selector when nothing matches', async () => {
    const url = `${fixtures.url}/clip.html`;
    const box = decodePng((await service.client.capture({ url, viewportWidth: 800, viewportHeight: 600, clipSelector: '#box' })).bytes);
    expect([box.width, box.height]).toEqual([300, 120]);
    expect(near(box.pixel(10, 10), [20, 20, 160])).toBe(true);
    expect(near(box.pixel(290, 110), [230, 120, 20])).toBe(true);

    const scaled = decodePng(
      (await service.client.capture({ url, viewportWidth: 800, viewportHeight: 600, clipSelector: '#inner', scaleFactor: 2 })).bytes,
    );
    expect([scaled.width, scaled.height]).toEqual([300, 120]);

    // An element below the fold is captured too.
    const below = decodePng((await service.client.capture({ url, viewportWidth: 800, viewportHeight: 600, clipSelector: '#below' })).bytes);
    expect([below.width, below.height]).toEqual([200, 100]);
    expect(near(below.pixel(100, 50), [120, 20, 120])).toBe(true);

    const before = await service.client.usage();
    const missing = await failure(service.client.capture({ url, clipSelector: '#nothing-here' }));
    expect([missing.status, missing.code]).toEqual([400, 'INVALID_INPUT']);
    expect(missing.message).toContain('clipSelector');
    expect(missing.message).toContain('#nothing-here');
    const invalid = await failure(service.client.capture({ url, clipSelector: 'div[[' }));
    expect([invalid.status, invalid.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(invalid.message).toContain('clipSelector: "div[[" is not a valid CSS selector');
    expect(invalid.details).toEqual([{ field: 'clipSelector', message: 'not a valid CSS selector', value: 'div[[' }]);
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
  });

  it('renders pdf as paginated A4 by default, several pages for a long document', async () => {
    const pdf = await pdfPages(
      (await service.client.capture({ url: `${fixtures.url}/long.html`, format: 'pdf', viewportWidth: 800, viewportHeight: 600 })).bytes,
    );
    expect(pdf.count).toBeGreaterThanOrEqual(3);
    for (const size of pdf.sizes) expect(isA4(size)).toBe(true);
  });

  it('renders pdfPageLayout=single as one page as tall as the document', async () => {
    const pdf = await pdfPages(
      (
        await service.client.capture({
          url: `${fixtures.url}/long.html`,
          format: 'pdf',
          pdfPageLayout: 'single',
          viewportWidth: 800,
          viewportHeight: 600,
        })
      ).bytes,
    );
    expect(pdf.count).toBe(1);
    // CSS px to points: × 0.75.
    expect(pdf.sizes[0]!.width).toBeCloseTo(800 * 0.75, 0);
    expect(Math.abs(pdf.sizes[0]!.height - 3000 * 0.75)).toBeLessThan(2);
  });

  it(`falls back to paginated A4 for a single-page pdf taller than ${MAX_SINGLE_PDF_HEIGHT_PX} px`, async () => {
    const pdf = await pdfPages(
      (
        await service.client.capture({
          url: `${fixtures.url}/tall.html`,
          format: 'pdf',
          pdfPageLayout: 'single',
          viewportWidth: 800,
          viewportHeight: 600,
        })
      ).bytes,
    );
    expect(pdf.count).toBeGreaterThan(5);
    expect(pdf.sizes.every(isA4)).toBe(true);
  });

  it('forces fullPage and fullPageScroll for pdf: lazy images far down are loaded', async () => {
    fixtures.reset();
    const pdf = await service.client.capture({
      url: `${fixtures.url}/lazy.html`,
      format: 'pdf',
      fullPage: false,
      fullPageScroll: false,
      viewportWidth: 800,
      viewportHeight: 600,
    });
    expect((await pdfPages(pdf.bytes)).count).toBeGreaterThan(3);
    expect(lazyRequests()).toBe(30);
  });
});

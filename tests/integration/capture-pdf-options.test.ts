import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaptureInput } from '../../client/src/index.js';
import { decodePng, near, pdfPages } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const run = promisify(execFile);

/** Five pages, each forced onto its own sheet, numbered in its text. */
const FIVE_PAGES = `<!doctype html><html><head><title>Quarterly report</title><style>
  body { margin: 0; font: 16px sans-serif; } section { break-after: page; }
</style></head><body>${[1, 2, 3, 4, 5].map((n) => `<section>Section number ${n}</section>`).join('')}</body></html>`;

/** A page whose whole background is green, with one word. */
const GREEN_PAGE =
  '<!doctype html><html><body style="margin:0;background:rgb(0,160,0)"><p style="margin:0;font:16px sans-serif">Leaf</p></body></html>';

/** A document 40 lines of 100 px: about four A4 pages at scale 1. */
const TALL = `<!doctype html><html><body style="margin:0;font:16px sans-serif">${Array.from({ length: 40 }, (_, i) => `<div style="height:100px">Line ${i + 1}</div>`).join('')}</body></html>`;

const MM = 72 / 25.4;

/** Chromium rounds paper sizes to whole CSS pixels (and A4 is 8.27 × 11.7 in to puppeteer): within 1.5 pt. */
const expectPoints = (actual: number, expected: number) => expect(Math.abs(actual - expected)).toBeLessThan(1.5);

describe('pdf options: paper, margins, background, scale, page ranges, header and footer', () => {
  let service: TestService;
  let work: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'rs-pdf-options-'));
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await rm(work, { recursive: true, force: true });
  });

  const pdf = async (options: CaptureInput) => {
    const file = await service.client.capture({ format: 'pdf', ...options });
    expect(file.contentType).toBe('application/pdf');
    return file.bytes;
  };
  let fileNumber = 0;
  const saved = async (bytes: Uint8Array) => {
    const path = join(work, `${++fileNumber}.pdf`);
    await writeFile(path, bytes);
    return path;
  };
  /** The text of the pages, as poppler's pdftotext extracts it. */
  const textOf = async (bytes: Uint8Array) => (await run('pdftotext', ['-layout', await saved(bytes), '-'])).stdout;
  /** The smallest x of any word on page 1, in points (pdftotext -bbox). */
  const leftmostWord = async (bytes: Uint8Array) => {
    const html = (await run('pdftotext', ['-bbox', '-f', '1', '-l', '1', await saved(bytes), '-'])).stdout;
    return Math.min(...[...html.matchAll(/<word xMin="([\d.]+)"/g)].map((m) => Number(m[1])));
  };
  /** Page 1 rasterized by poppler's pdftoppm at 18 dpi. */
  const raster = async (bytes: Uint8Array) => {
    const prefix = join(work, `page-${++fileNumber}`);
    await run('pdftoppm', ['-png', '-r', '18', '-f', '1', '-l', '1', '-singlefile', await saved(bytes), prefix]);
    return decodePng(await readFile(`${prefix}.png`));
  };
  const errorOf = async (query: string) => {
    const response = await service.get(`/capture?html=${encodeURIComponent(GREEN_PAGE)}&format=pdf&${query}`, {
      headers: { 'x-api-key': service.apiKey },
    });
    return { status: response.status, error: ((await response.json()) as { error: { code: string; message: string } }).error };
  };

  it('keeps the default paginated layout: A4 portrait, 10 mm left margin, backgrounds printed', async () => {
    const bytes = await pdf({ html: GREEN_PAGE });
    const { sizes } = await pdfPages(bytes);
    expectPoints(sizes[0]!.width, 595.28);
    expectPoints(sizes[0]!.height, 841.89);
    expectPoints(await leftmostWord(bytes), 10 * MM);
    const page = await raster(bytes);
    // The page centre is the printed green background; the 10 mm margin stays white.
    expect(near(page.pixel(Math.floor(page.width / 2), Math.floor(page.height / 2)), [0, 160, 0, 255], 30)).toBe(true);
    expect(near(page.pixel(1, Math.floor(page.height / 2)), [255, 255, 255, 255], 30)).toBe(true);
  });

  it.each([
    [{ pdfFormat: 'Letter' }, 612, 792],
    [{ pdfFormat: 'A5' }, 419.53, 595.28],
    [{ pdfLandscape: true }, 841.89, 595.28],
    [{ pdfFormat: 'Legal', pdfLandscape: true }, 1008, 612],
  ] as Array<[CaptureInput, number, number]>)('sizes the pages for %o (points)', async (options, width, height) => {
    const { sizes } = await pdfPages(await pdf({ html: GREEN_PAGE, ...options }));
    expectPoints(sizes[0]!.width, width);
    expectPoints(sizes[0]!.height, height);
  });

  it('moves the content with pdfMargin, and a side margin overrides it', async () => {
    expectPoints(await leftmostWord(await pdf({ html: GREEN_PAGE, pdfMargin: '30mm' })), 30 * MM);
    expectPoints(await leftmostWord(await pdf({ html: GREEN_PAGE, pdfMargin: '30mm', pdfMarginLeft: '1in' })), 72);
  });

  it('leaves the background white with pdfPrintBackground=false', async () => {
    const page = await raster(await pdf({ html: GREEN_PAGE, pdfPrintBackground: false }));
    expect(near(page.pixel(Math.floor(page.width / 2), Math.floor(page.height / 2)), [255, 255, 255, 255], 30)).toBe(true);
  });

  it('fits more on a page with a smaller pdfScale', async () => {
    const normal = (await pdfPages(await pdf({ html: TALL }))).count;
    const half = (await pdfPages(await pdf({ html: TALL, pdfScale: 0.5 }))).count;
    expect(normal).toBeGreaterThanOrEqual(4);
    expect(half).toBeLessThanOrEqual(Math.ceil(normal / 2));
  });

  it('keeps only the pages of pdfPageRanges', async () => {
    const all = await pdf({ html: FIVE_PAGES });
    expect((await pdfPages(all)).count).toBe(5);
    const some = await pdf({ html: FIVE_PAGES, pdfPageRanges: '1-2,4' });
    expect((await pdfPages(some)).count).toBe(3);
    const text = await textOf(some);
    expect(text).toContain('Section number 4');
    expect(text).not.toContain('Section number 3');
    expect((await pdfPages(await pdf({ html: FIVE_PAGES, pdfPageRanges: '4-' }))).count).toBe(2);
    expect((await pdfPages(await pdf({ html: FIVE_PAGES, pdfPageRanges: '-2' }))).count).toBe(2);
  });

  it('answers pdfPageRanges past the last page with 400 naming it, charging nothing', async () => {
    const before = await service.client.usage();
    const response = await service.get(`/capture?html=${encodeURIComponent(FIVE_PAGES)}&format=pdf&pdfPageRanges=9-12`, {
      headers: { 'x-api-key': service.apiKey },
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain('pdfPageRanges');
    expect(await service.client.usage()).toEqual(before);
  });

  it('answers margins that leave no room on the paper with 400 naming pdfMargin', async () => {
    const { status, error } = await errorOf('pdfFormat=A6&pdfMargin=60mm');
    expect(status).toBe(400);
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain('pdfMargin');
  });

  it('prints the header and footer templates with page numbers and the title', async () => {
    const bytes = await pdf({
      html: FIVE_PAGES,
      pdfHeaderTemplate: '<div style="font-size:10px;width:100%;text-align:center">Acme header <span class="title"></span></div>',
      pdfFooterTemplate:
        '<div style="font-size:10px;width:100%;text-align:center">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
    });
    const text = await textOf(bytes);
    expect(text).toContain('Acme header Quarterly report');
    expect(text).toContain('Page 1 of 5');
    expect(text).toContain('Page 5 of 5');
    // Without templates there is neither.
    const plain = await textOf(await pdf({ html: FIVE_PAGES }));
    expect(plain).not.toContain('Acme header');
    expect(plain).not.toContain('Page 1 of 5');
  });

  it('prints only the footer when only a footer template is given (no default header)', async () => {
    const text = await textOf(
      await pdf({ html: FIVE_PAGES, pdfFooterTemplate: '<div style="font-size:10px">Footer only <span class="pageNumber"></span></div>' }),
    );
    expect(text).toContain('Footer only 2');
    // Chromium's default header would print the title.
    expect(text).not.toContain('Quarterly report');
  });

  it('lets a CSS @page size win with pdfPreferCssPageSize', async () => {
    const html = '<!doctype html><html><head><style>@page { size: 100mm 150mm; }</style></head><body>Sized</body></html>';
    const preferred = (await pdfPages(await pdf({ html, pdfPreferCssPageSize: true }))).sizes[0]!;
    expectPoints(preferred.width, 100 * MM);
    expectPoints(preferred.height, 150 * MM);
    const a4 = (await pdfPages(await pdf({ html }))).sizes[0]!;
    expectPoints(a4.width, 595.28);
  });

  it('takes the pdf options in a POST /capture JSON body', async () => {
    const response = await fetch(`${service.url}/capture`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
      body: JSON.stringify({ html: FIVE_PAGES, format: 'pdf', pdfFormat: 'Letter', pdfLandscape: true, pdfPageRanges: '2' }),
    });
    expect(response.status).toBe(200);
    const { count, sizes } = await pdfPages(new Uint8Array(await response.arrayBuffer()));
    expect(count).toBe(1);
    expectPoints(sizes[0]!.width, 792);
  });

  it('applies pdfPrintBackground to the single-page layout too', async () => {
    const page = await raster(
      await pdf({ html: GREEN_PAGE, pdfPageLayout: 'single', viewportWidth: 400, viewportHeight: 300, pdfPrintBackground: false }),
    );
    expect(near(page.pixel(Math.floor(page.width / 2), Math.floor(page.height / 2)), [255, 255, 255, 255], 30)).toBe(true);
  });

  it.each([
    ['pdfFormat=B5', /pdfFormat must be one of: A0, A1, A2, A3, A4, A5, A6, Letter, Legal, Tabloid, Ledger/],
    ['pdfScale=3', /pdfScale must be a number from 0.1 to 2/],
    ['pdfScale=0.05', /pdfScale must be a number from 0.1 to 2/],
    ['pdfPageRanges=3-1', /pdfPageRanges must list pages or ranges from 1/],
    ['pdfPageRanges=one', /pdfPageRanges must list pages or ranges from 1/],
    ['pdfMargin=12', /pdfMargin must be a CSS length in px, in, cm or mm/],
    ['pdfMarginTop=1em', /pdfMarginTop must be a CSS length in px, in, cm or mm/],
    ['pdfLandscape=sideways', /pdfLandscape must be true or false/],
    ['pdfPageLayout=single&pdfLandscape=true', /pdfLandscape applies to the paginated pdf layout/],
    ['pdfPageLayout=single&pdfFooterTemplate=x', /pdfFooterTemplate applies to the paginated pdf layout/],
  ])('rejects %s with a 400 VALIDATION_ERROR naming the field', async (query, message) => {
    const { status, error } = await errorOf(query);
    expect(status).toBe(400);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toMatch(message);
  });
});

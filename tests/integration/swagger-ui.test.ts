import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfPages } from '../helpers/images.js';
import { systemResolver } from '../../server/src/security/resolver.js';
import { launchTestBrowser } from '../helpers/test-browser.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * The docs page as a person uses it: Authorize, "Try it out" with only what they care about filled
 * in (every other field as Swagger UI pre-fills it), Execute, and the right answer comes back.
 */
describe('Swagger UI at /docs', () => {
  let service: TestService;
  let browser: Browser;
  let profile: string;
  let page: Page;
  const prefix = `rs-test-swagger-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    service = await startTestService({
      env: { RATE_LIMIT_MAX: '1000', REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '0' },
      // The pre-filled POST /captures body names example.com, which this closed network cannot resolve;
      // a public address lets it be queued (no worker here renders it).
      resolver: async (host) => (host === 'example.com' ? ['93.184.215.14'] : systemResolver(host)),
    });
    profile = mkdtempSync(join(tmpdir(), 'daguerre-swagger-profile-'));
    browser = await launchTestBrowser(profile);
    page = await (await browser.createBrowserContext()).newPage();
    page.setDefaultTimeout(30_000);
    // Authorize with the X-API-Key header scheme, once for all the tries below.
    await page.goto(`${service.url}/docs/`, { waitUntil: 'load' });
    await page.waitForSelector('.btn.authorize');
    await page.click('.btn.authorize');
    const headerScheme = await page.waitForSelector(
      'xpath///div[contains(@class,"auth-container")][.//*[contains(text(),"apiKeyHeader")]]',
    );
    const keyInput = await headerScheme!.waitForSelector('input');
    await keyInput!.type(service.apiKey);
    const authorize = await headerScheme!.waitForSelector('button[type="submit"], button.authorize');
    await authorize!.click();
    await page.click('.modal-ux .close-modal');
  });
  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await service?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  /** Opens an operation (unless open), presses "Try it out" (unless pressed) and returns its root selector. */
  async function tryOut(id: string): Promise<string> {
    const root = `#operations-${id}`;
    if (!(await page.$(`${root} .opblock-body`))) await page.click(`${root} .opblock-summary`);
    const button = await page.waitForSelector(`${root} .try-out__btn`);
    if ((await button!.evaluate((node) => node.textContent ?? '')).includes('Try it out')) await button!.click();
    await page.waitForSelector(`${root} .execute`);
    return root;
  }

  async function execute(root: string): Promise<{ status: string; body: string }> {
    await page.click(`${root} .execute`);
    const status = await page.waitForSelector(`${root} .live-responses-table .response .response-col_status`);
    return {
      status: await status!.evaluate((node) => node.textContent?.trim() ?? ''),
      body: await page.$eval(`${root} .live-responses-table`, (node) => node.textContent ?? ''),
    };
  }

  it('authorizes, tries GET /capture with only html, and shows a 200 with the image', async () => {
    const sent: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/capture') sent.push(request.url());
    });

    // Open GET /capture, Try it out, fill only html, Execute.
    await page.click('#operations-capture-capture .opblock-summary');
    await (await page.waitForSelector('#operations-capture-capture .try-out__btn'))!.click();
    const html = await page.waitForSelector('#operations-capture-capture tr[data-param-name="html"] input');
    await html!.type('<body style="margin:0;background:rgb(0,150,80)"><h1>docs</h1></body>');
    await page.click('#operations-capture-capture .execute');

    const status = await page.waitForSelector('#operations-capture-capture .live-responses-table .response .response-col_status');
    const statusText = await status!.evaluate((node) => node.textContent?.trim() ?? '');
    const body = await page.$eval('#operations-capture-capture .live-responses-table', (node) => node.textContent ?? '');
    expect(statusText, `${body}\nsent: ${sent.join('\n')}`).toBe('200');
    // Swagger UI shows an image response as an <img>; it decoded to a real picture.
    const image = await page.waitForFunction(
      () => {
        const img = document.querySelector<HTMLImageElement>('#operations-capture-capture .live-responses-table img');
        return img && img.complete && img.naturalWidth > 0 ? { width: img.naturalWidth, height: img.naturalHeight } : false;
      },
      { timeout: 30_000 },
    );
    const size = (await image.jsonValue()) as { width: number; height: number };
    expect(size.width).toBeGreaterThan(0);
    expect(size.height).toBeGreaterThan(0);
    // The capture really was sent with the pre-filled fields, headers among them as a JSON string.
    expect(sent).toHaveLength(1);
    const query = new URL(sent[0]!).searchParams;
    expect(query.get('html')).toContain('docs');
    if (query.has('headers')) expect(() => JSON.parse(query.get('headers')!) as unknown).not.toThrow();
    expect([...query.keys()].some((key) => key.startsWith('additionalProp'))).toBe(false);
    // Nothing pre-filled from an example, and no default that depends on the device preset.
    for (const name of [
      'headers',
      'pdfPageRanges',
      'pdfMargin',
      'pdfMarginTop',
      'viewportWidth',
      'viewportHeight',
      'scaleFactor',
      'pdfFormat',
      'pdfScale',
    ]) {
      expect(query.has(name), `${name} was sent: ${sent[0]}`).toBe(false);
    }
  }, 120_000);

  it('tries GET /capture as a pdf: every page is kept, and the answer is offered as a download, not shown as text', async () => {
    const sent: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/capture') sent.push(request.url());
    });
    const root = await tryOut('capture-capture');
    await page.select(`${root} tr[data-param-name="format"] select`, 'pdf');
    const html = await page.waitForSelector(`${root} tr[data-param-name="html"] input`);
    await html!.click({ count: 3 });
    await html!.type('<p style="break-after:page">1</p>'.repeat(5) + '<p>6</p>');
    const { status, body } = await execute(root);
    expect(status, `${body}\nsent: ${sent.join('\n')}`).toBe('200');
    const download = await page.waitForSelector(`${root} .live-responses-table a[download]`);
    expect(await download!.evaluate((node) => node.textContent ?? '')).toMatch(/Download file/);
    expect(body).not.toContain('%PDF');
    // The same request, replayed: all six pages (a pre-filled pdfPageRanges=1-3,5 kept four).
    const replay = await fetch(sent.at(-1)!, { headers: { 'X-API-Key': service.apiKey } });
    expect((await pdfPages(new Uint8Array(await replay.arrayBuffer()))).count).toBe(6);
  }, 120_000);

  it('tries POST /captures with the pre-filled body: queued (202), the authorized key is not overridden', async () => {
    const bodies: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/captures' && request.method() === 'POST') bodies.push(request.postData() ?? '');
    });
    const root = await tryOut('captures-createCaptureJob');
    const { status, body } = await execute(root);
    expect(status, `${body}\nsent: ${bodies.join('\n')}`).toBe('202');
    expect(JSON.parse(bodies[0]!)).toEqual({ url: 'https://example.com', format: 'png', fullPage: true });
  }, 120_000);
});

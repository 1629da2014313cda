import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchTestBrowser } from '../helpers/test-browser.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * The docs page as a person uses it: Authorize, "Try it out" on GET /capture with only html filled
 * in (every other field as Swagger UI pre-fills it), Execute, and the image comes back.
 */
describe('Swagger UI at /docs', () => {
  let service: TestService;
  let browser: Browser;
  let profile: string;
  let page: Page;

  beforeAll(async () => {
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
    profile = mkdtempSync(join(tmpdir(), 'rendershot-swagger-profile-'));
    browser = await launchTestBrowser(profile);
    page = await (await browser.createBrowserContext()).newPage();
    page.setDefaultTimeout(30_000);
  });
  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await service?.stop();
  });

  it('authorizes, tries GET /capture with only html, and shows a 200 with the image', async () => {
    const sent: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/capture') sent.push(request.url());
    });
    await page.goto(`${service.url}/docs/`, { waitUntil: 'load' });
    await page.waitForSelector('.btn.authorize');

    // Authorize with the X-API-Key header scheme.
    await page.click('.btn.authorize');
    const headerScheme = await page.waitForSelector('xpath///div[contains(@class,"auth-container")][.//*[contains(text(),"apiKeyHeader")]]');
    const keyInput = await headerScheme!.waitForSelector('input');
    await keyInput!.type(service.apiKey);
    const authorize = await headerScheme!.waitForSelector('button[type="submit"], button.authorize');
    await authorize!.click();
    await page.click('.modal-ux .close-modal');

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
  }, 120_000);
});

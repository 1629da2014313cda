import type { CaptureQuality, ErrorBody } from '@daguerre/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * The quality report on every capture (docs/page-insight.md): pages built to fail each check (blank,
 * imagesNotLoaded, overlay, fontsFailed, stillGrowing) and clean pages that must pass (no false
 * alarms: a fixed backdrop under the content, a sticky header, an app shell that is itself fixed,
 * lazy images below the fold, SVG pictures, an image without a source). failOnBlank fails, uncharged.
 */
describe('capture quality report', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const quality = async (path: string, extra: Record<string, unknown> = {}): Promise<CaptureQuality> => {
    const result = await service.client.captureJson({
      url: path.startsWith('/') ? `${fixtures.url}${path}` : `${fixtures.url}/insight/${path}`,
      viewportWidth: 1024,
      viewportHeight: 700,
      ...extra,
    });
    return result.data.quality;
  };
  const checks = (report: CaptureQuality) => report.findings.map((finding) => finding.check);

  it('passes clean pages with no findings, and says ok in X-Capture-Quality', async () => {
    for (const page of ['article.html', 'app-shell.html', 'svg-image.html']) {
      const report = await quality(page);
      expect(report, page).toEqual({ ok: true, findings: [] });
    }
    // The whole article too (lazy image far down, sticky header, fixed backdrop), and as a pdf.
    expect(await quality('article.html', { fullPage: true })).toEqual({ ok: true, findings: [] });
    expect(await quality('article.html', { format: 'pdf' })).toEqual({ ok: true, findings: [] });
    const file = await service.client.capture({ url: `${fixtures.url}/insight/article.html`, viewportWidth: 800, viewportHeight: 600 });
    expect(file.headers['x-capture-quality']).toBe('ok');
    expect(file.headers['x-capture-quality-findings']).toBeUndefined();
  });

  it('finds a blank page (single colour) and says warn', async () => {
    const report = await quality('blank.html');
    expect(checks(report)).toEqual(['blank']);
    expect(report.ok).toBe(false);
    expect(report.findings[0]!.message).toContain('single colour');
    const file = await service.client.capture({
      url: `${fixtures.url}/insight/blank.html`,
      viewportWidth: 400,
      viewportHeight: 300,
      format: 'jpeg',
    });
    expect(file.headers['x-capture-quality']).toBe('warn');
    expect(file.headers['x-capture-quality-findings']).toBe('blank');
  });

  it('fails a blank capture with failOnBlank=true (422 CAPTURE_BLANK), charging nothing; a page with content passes', async () => {
    const before = await service.client.usage();
    const response = await service.get(
      `/capture?url=${encodeURIComponent(`${fixtures.url}/insight/blank.html`)}&failOnBlank=true&apiKey=${service.apiKey}`,
    );
    expect(response.status).toBe(422);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe('CAPTURE_BLANK');
    expect(body.error.message).toContain('failOnBlank');
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
    const fine = await service.client.captureJson({
      url: `${fixtures.url}/insight/article.html`,
      failOnBlank: true,
      viewportWidth: 800,
      viewportHeight: 600,
    });
    expect(fine.data.quality.ok).toBe(true);
  });

  it('names the images in the captured area that never loaded, and where they are', async () => {
    const report = await quality('broken-images.html');
    expect(checks(report)).toEqual(['imagesNotLoaded']);
    const finding = report.findings[0]! as unknown as {
      count: number;
      images: Array<{ src: string; selector: string; x: number; y: number }>;
    };
    expect(finding.count).toBe(2);
    expect(finding.images.map((image) => image.selector)).toEqual(['img#gone', 'img.thumb.broken']);
    expect(finding.images[0]!.src).toBe(`${fixtures.url}/insight/no-such-picture.png`);
    expect(report.findings[0]!.message).toContain('img#gone');
  });

  it('finds lazy images a full page left unloaded, says how to load them, and passes with fullPageScroll', async () => {
    // lazy.html: 28 loading=lazy images from 3 900 px down.
    const report = await quality('/lazy.html', { fullPage: true });
    expect(checks(report)).toEqual(['imagesNotLoaded']);
    expect(report.findings[0]!.message).toContain('fullPageScroll=true');
    expect(await quality('/lazy.html', { fullPage: true, fullPageScroll: true })).toEqual({ ok: true, findings: [] });
  });

  it('leaves out a broken image outside the captured area (it is not in the picture)', async () => {
    // noisy.html has a 404 image at left:-9999px.
    expect(checks(await quality('noisy.html'))).toEqual([]);
  });

  it('finds a fixed overlay still covering the content, naming the element and its share', async () => {
    const report = await quality('overlay.html');
    expect(checks(report)).toEqual(['overlay']);
    const finding = report.findings[0]! as unknown as { selector: string; position: string; share: number };
    expect(finding.selector).toBe('div#consent-wall.consent');
    expect(finding.position).toBe('fixed');
    expect(finding.share).toBe(1);
    // removeSelectors is the cleanup: afterwards the page is clean.
    expect(await quality('overlay.html', { removeSelectors: ['#consent-wall'] })).toEqual({ ok: true, findings: [] });
  });

  it('finds web fonts that failed to load', async () => {
    const report = await quality('font-fail.html');
    expect(checks(report)).toEqual(['fontsFailed']);
    expect((report.findings[0] as unknown as { families: string[] }).families).toEqual(['Brand Serif']);
  });

  it('finds a page still growing while it was captured', async () => {
    const report = await quality('growing.html');
    expect(checks(report)).toContain('stillGrowing');
    const finding = report.findings.find((f) => f.check === 'stillGrowing')! as unknown as { heightBefore: number; heightAfter: number };
    expect(finding.heightAfter).toBeGreaterThan(finding.heightBefore);
  });

  it('never fails a capture because the page broke the DOM APIs the readers use', async () => {
    const result = await service.client.captureJson({
      url: `${fixtures.url}/insight/hostile.html`,
      metadata: true,
      viewportWidth: 640,
      viewportHeight: 400,
    });
    expect(result.data.quality).toEqual({ ok: true, findings: [] });
    expect(result.data.metadata!.httpStatus).toBe(200);
    const markdown = await service.client.captureJson({ url: `${fixtures.url}/insight/hostile.html`, format: 'markdown' });
    expect(markdown.data.content).toContain('This page breaks the APIs a reader would call.');
  });

  it('keeps the report on a cache hit and in inline html mode', async () => {
    const html = '<body style="margin:0;background:#123456"></body>';
    const first = await service.client.captureJson({ html, viewportWidth: 300, viewportHeight: 200, cacheEnabled: true });
    const second = await service.get(
      `/capture?html=${encodeURIComponent(html)}&viewportWidth=300&viewportHeight=200&cacheEnabled=true&apiKey=${service.apiKey}`,
    );
    expect(checks(first.data.quality)).toEqual(['blank']);
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(second.headers.get('x-capture-quality')).toBe('warn');
  });
});

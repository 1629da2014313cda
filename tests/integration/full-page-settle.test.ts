import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CaptureResult } from '@daguerre/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { FixtureServer } from '../helpers/fixture-server.js';
import { dataUriBytes, decodePng, near, type DecodedImage } from '../helpers/images.js';
import { captureQuery, startTestService, type TestService } from '../helpers/test-service.js';

/**
 * Full pages whose pictures settle late or whose layout changes while they are taken
 * (docs/capture-fidelity.md, "Late pictures"). The lateness is the fixture server's: a picture
 * answered seconds after it is asked for, or never; and pages that grow when a picture arrives or
 * when the capture resizes the frame (Chromium fires `resize` for each screenshot beyond the
 * viewport). Nothing here races a timer of the test.
 */

const RED = [220, 30, 30];
const BLUE = [40, 40, 200];
const GREY = [240, 240, 240];
/** Longer than any capture of these small pages takes, shorter than the wait for late pictures (5 s). */
const LATE_MS = 2_500;
/** The bottom marker: 50 px of blue that every whole image ends with. */
const MARKER = `<div style="height:50px;background:rgb(${BLUE.join(',')})"></div>`;
const page = (body: string, script = '') =>
  `<!doctype html><html><body style="margin:0;background:rgb(${GREY.join(',')})">${body}${script ? `<script>${script}</script>` : ''}</body></html>`;

type CaptureData = CaptureResult['data'];

describe('full pages laid out again once late pictures settle, and retaken when they change while taken', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  const pictures = new Map<string, Buffer>();
  let held: ServerResponse[] = [];

  beforeAll(async () => {
    for (const size of ['400x300', '400x1500']) {
      const [width, height] = size.split('x').map(Number) as [number, number];
      const background = { r: RED[0]!, g: RED[1]!, b: RED[2]! };
      pictures.set(
        size,
        await sharp({ create: { width, height, channels: 3, background } })
          .png()
          .toBuffer(),
      );
    }
    fixtures = await new FixtureServer().start();
    // /late.png?size=WxH&ms=N: a red picture answered N ms after it is asked for; ms=never holds it.
    fixtures.route('/late.png', (req: IncomingMessage, res: ServerResponse) => {
      const query = new URL(req.url!, 'http://fixture').searchParams;
      const answer = () => {
        res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' });
        res.end(pictures.get(query.get('size') ?? '400x300'));
      };
      if (query.get('ms') === 'never') held.push(res);
      else setTimeout(answer, Number(query.get('ms') ?? LATE_MS));
    });
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    for (const res of held) res.destroy();
    held = [];
    await service?.stop();
    await fixtures?.stop();
  });

  /** A JSON capture, its image decoded. */
  const capture = async (name: string, params: Record<string, string | number | boolean>, on = service) => {
    const response = await on.get(`/capture?${captureQuery({ ...params, returnFile: false, apiKey: on.apiKey })}`);
    const body = (await response.json()) as { data: CaptureData; error?: { code: string } };
    if (response.status !== 200) return { status: response.status, code: body.error?.code };
    const bytes = dataUriBytes(body.data.imageData!);
    // SAVE_CAPTURES=1 keeps each image in the temp folder, to look at.
    if (process.env.SAVE_CAPTURES) writeFileSync(join(tmpdir(), `full-page-settle-${name}.png`), bytes);
    return { status: 200, image: decodePng(bytes), data: body.data, stillGrowingHeader: response.headers.get('x-capture-still-growing') };
  };
  const checks = (data: CaptureData) => data.quality.findings.map((finding) => finding.check);
  /** Every pixel of a row across the red picture's middle, inside its 400 px. */
  const redAcross = (image: DecodedImage, y: number) => [10, 100, 200, 300, 390].every((x) => near(image.pixel(x, y), RED));

  it('draws a picture that arrives after load, not an empty box (eager with domcontentloaded, lazy near the top)', async () => {
    const stamp = Date.now();
    fixtures.page(
      '/late-pictures',
      page(
        `<div style="height:700px"></div><img width=400 height=300 style="display:block" src="/late.png?eager=${stamp}">` +
          `<div style="height:1400px"></div><img loading=lazy width=400 height=300 style="display:block" src="/late.png?lazy=${stamp}">` +
          `<div style="height:300px"></div>${MARKER}`,
      ),
    );
    const shot = await capture('late-pictures', {
      url: `${fixtures.url}/late-pictures`,
      fullPage: true,
      waitUntil: 'domcontentloaded',
      viewportWidth: 800,
      viewportHeight: 600,
    });
    expect(shot.status).toBe(200);
    const { image, data } = shot as Required<typeof shot>;
    expect([image.width, image.height]).toEqual([800, 3050]);
    expect(redAcross(image, 850), 'the eager picture').toBe(true);
    expect(redAcross(image, 2550), 'the lazy picture').toBe(true);
    expect(near(image.pixel(600, 850), GREY)).toBe(true);
    expect(near(image.pixel(400, 3045), BLUE)).toBe(true);
    expect(data.quality).toEqual({ ok: true, findings: [] });
  });

  it('takes the whole page when a late picture without a declared size makes it taller', async () => {
    fixtures.page(
      '/grows-with-picture',
      page(
        `<div style="height:2400px"></div><img loading=lazy style="display:block" src="/late.png?size=400x1500&n=${Date.now()}"><div style="height:300px"></div>${MARKER}`,
      ),
    );
    const shot = await capture('grows-with-picture', {
      url: `${fixtures.url}/grows-with-picture`,
      fullPage: true,
      viewportWidth: 800,
      viewportHeight: 600,
    });
    expect(shot.status).toBe(200);
    const { image, data } = shot as Required<typeof shot>;
    // 2 400 + 1 500 + 300 + 50: the picture's height is in the image, and the marker below it.
    expect([image.width, image.height]).toEqual([800, 4250]);
    for (const y of [2410, 3100, 3890]) expect(redAcross(image, y), `y=${y}`).toBe(true);
    expect(near(image.pixel(400, 4245), BLUE)).toBe(true);
    expect(data.page).toMatchObject({ height: 4250, truncated: false, stillGrowing: false });
    expect(data.quality.ok).toBe(true);
  });

  it('follows a picture whose arrival adds another late one, and the part it adds', async () => {
    // The first picture's load appends a second (also late) and the bottom marker.
    const stamp = Date.now();
    const append =
      `const more=document.createElement('div');` +
      `more.innerHTML='<img width=400 height=300 style="display:block" src="/late.png?second=${stamp}&ms=1200">${MARKER}';` +
      'document.body.append(more)';
    fixtures.page(
      '/picture-adds-picture',
      page(
        `<div style="height:2400px"></div><img loading=lazy width=400 height=300 style="display:block" src="/late.png?first=${stamp}&ms=1200" onload="${append.replace(/"/g, '&quot;')}">`,
      ),
    );
    const shot = await capture('picture-adds-picture', {
      url: `${fixtures.url}/picture-adds-picture`,
      fullPage: true,
      viewportWidth: 800,
      viewportHeight: 600,
    });
    expect(shot.status).toBe(200);
    const { image, data } = shot as Required<typeof shot>;
    expect([image.width, image.height]).toEqual([800, 3050]);
    expect(redAcross(image, 2550), 'the first picture').toBe(true);
    expect(redAcross(image, 2850), 'the picture it added').toBe(true);
    expect(near(image.pixel(400, 3045), BLUE)).toBe(true);
    expect(data.quality.ok).toBe(true);
  });

  it('takes a page again when it grew while its tiles were taken: whole, and both reports agree it is complete', async () => {
    // Grows by 2 000 px once, at the first resize: Chromium fires one for each screenshot beyond the viewport.
    const growOnce = `addEventListener('resize',()=>{const d=document.createElement('div');d.innerHTML='<div style="height:2000px"></div>${MARKER}';document.body.append(d)},{once:true})`;
    fixtures.page(
      '/grows-when-taken',
      page(`<div style="height:20000px;background:linear-gradient(rgb(240,240,240),rgb(120,120,120))"></div>`, growOnce),
    );
    const tiled = await capture('grows-when-taken', {
      url: `${fixtures.url}/grows-when-taken`,
      fullPage: true,
      viewportWidth: 400,
      viewportHeight: 600,
    });
    expect(tiled.status).toBe(200);
    const { image, data } = tiled as Required<typeof tiled>;
    expect([image.width, image.height]).toEqual([400, 22_050]);
    expect(near(image.pixel(200, 22_045), BLUE)).toBe(true);
    expect(data.page).toMatchObject({ height: 22_050, stillGrowing: false, truncated: false });
    expect(checks(data)).not.toContain('stillGrowing');

    // One frame (no tiles): the same.
    fixtures.page('/grows-when-taken-short', page('<div style="height:3000px"></div>', growOnce));
    const single = await capture('grows-when-taken-short', {
      url: `${fixtures.url}/grows-when-taken-short`,
      fullPage: true,
      viewportWidth: 400,
      viewportHeight: 600,
    });
    expect(single.status).toBe(200);
    const one = single as Required<typeof single>;
    expect([one.image.width, one.image.height]).toEqual([400, 5050]);
    expect(near(one.image.pixel(200, 5045), BLUE)).toBe(true);
    expect(one.data.page.stillGrowing).toBe(false);
  });

  it('says a page still growing after the retake is still growing, in the page report, its header and the quality report alike', async () => {
    const growEachTime = `addEventListener('resize',()=>{const d=document.createElement('div');d.style.height='1000px';document.body.append(d)})`;
    fixtures.page('/keeps-growing', page('<div style="height:20000px"></div>', growEachTime));
    const shot = await capture('keeps-growing', {
      url: `${fixtures.url}/keeps-growing`,
      fullPage: true,
      viewportWidth: 400,
      viewportHeight: 600,
    });
    expect(shot.status).toBe(200);
    const { data, stillGrowingHeader } = shot as Required<typeof shot>;
    expect(data.page.stillGrowing).toBe(true);
    expect(stillGrowingHeader).toBe('true');
    const finding = data.quality.findings.find((f) => f.check === 'stillGrowing') as
      { heightBefore: number; heightAfter: number } | undefined;
    expect(finding).toBeDefined();
    expect(finding!.heightAfter).toBeGreaterThan(finding!.heightBefore);

    // A scroll that stopped while an endless list still grew: the quality report says it too.
    const scrolled = await capture('scroll-stopped', {
      url: `${fixtures.url}/fidelity/infinite.html`,
      fullPage: true,
      fullPageScroll: true,
      fullPageScrollDuration: 1000,
      viewportWidth: 400,
      viewportHeight: 300,
    });
    expect(scrolled.status).toBe(200);
    const listed = scrolled as Required<typeof scrolled>;
    expect(listed.data.page.stillGrowing).toBe(true);
    expect(checks(listed.data)).toContain('stillGrowing');
  });

  it('never cuts a full page for time: with little time left it is whole, or the capture times out', async () => {
    // The page's one picture never arrives: load waits out its budget and the capture has about
    // 1.6 s left (a loaded machine's case). Before, the tiles stopped there and a 33 000 px page came
    // back 8 000 px tall.
    const hurried = await startTestService({ env: { RATE_LIMIT_MAX: '1000', CAPTURE_TIMEOUT_MS: '8000' } });
    try {
      fixtures.page(
        '/tall-hurried',
        page(
          `<img width=50 height=50 style="display:block" src="/late.png?ms=never&n=${Date.now()}"><div style="height:32950px;background:rgb(200,200,120)"></div>${MARKER}`,
        ),
      );
      const shot = await capture(
        'tall-hurried',
        { url: `${fixtures.url}/tall-hurried`, fullPage: true, viewportWidth: 100, viewportHeight: 600 },
        hurried,
      );
      if (shot.status !== 200) {
        expect([shot.status, shot.code]).toEqual([504, 'CAPTURE_TIMEOUT']);
        return;
      }
      const { image, data } = shot as Required<typeof shot>;
      expect(data.page).toMatchObject({ waitTimedOut: true, truncated: false });
      expect([image.width, image.height]).toEqual([100, 33_050]);
      expect(near(image.pixel(50, 33_045), BLUE)).toBe(true);
    } finally {
      await hurried.stop();
    }
  });
});

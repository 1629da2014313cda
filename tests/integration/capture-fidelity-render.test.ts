import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'puppeteer-core';
import type { CaptureResult } from '@daguerre/contract';
import { makeChromiumProfile } from '../../server/src/capture/browser/chromium-launch.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { dataUriBytes, decodePng, type DecodedImage } from '../helpers/images.js';
import { launchTestBrowser } from '../helpers/test-browser.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const redDominant = ([r, g, b]: number[]) => r! > 150 && g! < 60 && b! < 60;
const greenDominant = ([r, g, b]: number[]) => g! > 120 && r! < 40 && b! < 40;
const whiteish = ([r, g, b]: number[]) => r! > 200 && g! > 200 && b! > 200;

/** Pixels whose colour differs between two images of the same size. */
function differingPixels(a: DecodedImage, b: DecodedImage): number {
  let count = 0;
  for (let y = 0; y < a.height; y++) {
    for (let x = 0; x < a.width; x++) {
      const p = a.pixel(x, y);
      const q = b.pixel(x, y);
      if (p[0] !== q[0] || p[1] !== q[1] || p[2] !== q[2]) count += 1;
    }
  }
  return count;
}

/** Text in the page's default, sans-serif and serif families: Han, kana, hangul and Latin. */
const cjkPage = (lang: string) => `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"></head><body style="margin:8px">
<p style="font-size:20px">默认 漢字 骨 直 今 門 Hello World 123 ひらがな 한국어</p>
<p style="font-family:sans-serif;font-size:20px">sans 骨 直 今 門 Hello World</p>
<p style="font-family:serif;font-size:20px">serif 骨 直 今 門 Hello World</p>
<p style="font-family:monospace;font-size:20px">mono Hello World 0123</p>
<p style="font-family:cursive;font-size:20px">cursive 今 門 Hello</p>
</body></html>`;
const latinPage =
  '<!doctype html><html lang="en"><body style="margin:8px"><p style="font-size:20px">Hello World, the quick brown fox 0123</p><p style="font-family:serif;font-size:20px">A serif line</p><p style="font-family:sans-serif;font-size:20px">A sans line</p><p style="font-family:monospace;font-size:20px">A monospace line</p></body></html>';

/**
 * What the page finally shows (docs/capture-fidelity.md): reducedMotion shows the end states of
 * motion already running; fullPageScroll keeps scrolling a growing page; CJK pages get the fonts
 * full Chromium picks.
 */
describe('capture fidelity: motion, growing pages, fonts by language', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    for (const lang of ['zh-Hans', 'zh-Hant', 'ja', 'ko']) fixtures.page(`/cjk-${lang}`, cjkPage(lang));
    fixtures.page('/latin', latinPage);
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const capture = async (query: Record<string, string>) => {
    const response = await service.get(`/capture?${new URLSearchParams({ ...query, apiKey: service.apiKey })}`);
    expect(response.status, response.status === 200 ? '' : await response.clone().text()).toBe(200);
    return response;
  };
  const captureJson = async (query: Record<string, string>) =>
    (await (await capture({ ...query, returnFile: 'false' })).json()) as CaptureResult;

  it('reducedMotion shows the end state of a running 30 s transition, a 20 s fade-in and a 30 s Web Animation', async () => {
    const url = `${fixtures.url}/fidelity/motion.html`;
    const moving = decodePng(new Uint8Array(await (await capture({ url, viewportWidth: '300', viewportHeight: '100' })).arrayBuffer()));
    // Without it the motion has barely started (the capture can fail, which the next one must not).
    expect(redDominant(moving.pixel(50, 50)), String(moving.pixel(50, 50))).toBe(true);
    expect(whiteish(moving.pixel(150, 50)), String(moving.pixel(150, 50))).toBe(true);
    expect(redDominant(moving.pixel(250, 50)), String(moving.pixel(250, 50))).toBe(true);

    const still = decodePng(
      new Uint8Array(await (await capture({ url, viewportWidth: '300', viewportHeight: '100', reducedMotion: 'true' })).arrayBuffer()),
    );
    for (const x of [50, 150, 250]) expect(greenDominant(still.pixel(x, 50)), `x=${x}: ${String(still.pixel(x, 50))}`).toBe(true);
  });

  it('reducedMotion stops the autoplay of a carousel through its library (Swiper here)', async () => {
    const url = `${fixtures.url}/fidelity/carousel.html`;
    const playing = decodePng(new Uint8Array(await (await capture({ url, viewportWidth: '100', viewportHeight: '100' })).arrayBuffer()));
    expect(greenDominant(playing.pixel(50, 50))).toBe(false);
    const stopped = decodePng(
      new Uint8Array(await (await capture({ url, viewportWidth: '100', viewportHeight: '100', reducedMotion: 'true' })).arrayBuffer()),
    );
    expect(greenDominant(stopped.pixel(50, 50)), String(stopped.pixel(50, 50))).toBe(true);
  });

  it('keeps scrolling a growing page: a longer fullPageScrollDuration loads more, and stillGrowing says it had not stopped', async () => {
    const url = `${fixtures.url}/fidelity/infinite.html`;
    const base = { url, fullPage: 'true', fullPageScroll: 'true', viewportWidth: '400', viewportHeight: '300', format: 'jpeg' };
    const short = await captureJson({ ...base, fullPageScrollDuration: '1000' });
    const long = await captureJson({ ...base, fullPageScrollDuration: '5000' });
    // Three blocks at first (1 500 px); each visit to the end adds two.
    expect(short.data.page.height).toBeGreaterThan(1_500);
    expect(long.data.page.height).toBeGreaterThan(short.data.page.height + 2_000);
    expect(short.data.page.stillGrowing).toBe(true);
    expect(long.data.page.stillGrowing).toBe(true);
    const response = await capture({ ...base, fullPageScrollDuration: '1000' });
    expect(response.headers.get('x-capture-still-growing')).toBe('true');
  });

  it('scrolls a page that stops growing to its end and says it is complete', async () => {
    // 11 blocks at most: 5 500 px and the 1 px sentinel, reached well within the duration.
    const json = await captureJson({
      url: `${fixtures.url}/fidelity/infinite.html?cap=11`,
      fullPage: 'true',
      fullPageScroll: 'true',
      fullPageScrollDuration: '20000',
      viewportWidth: '400',
      viewportHeight: '300',
    });
    expect(json.data.page).toMatchObject({ height: 5_501, stillGrowing: false, truncated: false });
    const image = decodePng(dataUriBytes(json.data.imageData!));
    expect(image.height).toBe(5_501);
  });

  it('stops scrolling a growing page at the full-page height budget, and says it was still growing', async () => {
    const budgeted = await startTestService({ env: { RATE_LIMIT_MAX: '1000', FULL_PAGE_MAX_HEIGHT_PX: '4000' } });
    try {
      const query = {
        url: `${fixtures.url}/fidelity/infinite.html`,
        fullPage: 'true',
        fullPageScroll: 'true',
        fullPageScrollDuration: '20000',
        viewportWidth: '400',
        viewportHeight: '300',
        format: 'jpeg',
        returnFile: 'false',
        apiKey: budgeted.apiKey,
      };
      const response = await budgeted.get(`/capture?${new URLSearchParams(query)}`);
      expect(response.status, await response.clone().text()).toBe(200);
      const { data } = (await response.json()) as CaptureResult;
      // Past 4 000 px the scroll stops (20 s of scrolling would have grown it far beyond 8 000 px).
      expect(data.page.height).toBeGreaterThanOrEqual(4_000);
      expect(data.page.height).toBeLessThan(8_000);
      expect(data.page).toMatchObject({ stillGrowing: true, truncated: true });
    } finally {
      await budgeted.stop();
    }
  });

  describe('fonts chosen by the page language, pixel for pixel as full Chromium', () => {
    let browser: Browser;
    let profile: string;
    beforeAll(async () => {
      profile = makeChromiumProfile('daguerre-fonts-profile-');
      browser = await launchTestBrowser(profile);
    });
    afterAll(async () => {
      await browser?.close();
      rmSync(profile, { recursive: true, force: true });
    });

    const fullChromium = async (url: string) => {
      const page = await browser.newPage();
      try {
        await page.setViewport({ width: 700, height: 300 });
        await page.goto(url, { waitUntil: 'load' });
        return decodePng(await page.screenshot({ type: 'png' }));
      } finally {
        await page.close();
      }
    };

    for (const lang of ['zh-Hans', 'zh-Hant', 'ja', 'ko', 'latin']) {
      it(`${lang}: the service's image is full Chromium's`, async () => {
        const url = lang === 'latin' ? `${fixtures.url}/latin` : `${fixtures.url}/cjk-${lang}`;
        const ours = decodePng(new Uint8Array(await (await capture({ url, viewportWidth: '700', viewportHeight: '300' })).arrayBuffer()));
        const theirs = await fullChromium(url);
        expect([ours.width, ours.height]).toEqual([theirs.width, theirs.height]);
        expect(differingPixels(ours, theirs)).toBe(0);
      });
    }
  });
});

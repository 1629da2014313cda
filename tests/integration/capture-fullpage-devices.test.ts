import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import type { CaptureInput } from '../../client/src/index.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near, type DecodedImage } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/** Colour of band i of bands.html (the same function as in the page). */
const bandColour = (i: number) => [(i * 67 + 40) % 256, (i * 139 + 90) % 256, (i * 29 + 160) % 256];
const HERO_COLOUR = [250, 20, 120];
const SWATCH_COLOUR = [30, 90, 220];
/** iphone-15: 393 × 852 CSS px at scale 3. */
const IPHONE = { width: 393, height: 852, scale: 3 };

/** Any image the service returns, decoded to RGB pixels (png or jpeg). */
async function decode(bytes: Uint8Array): Promise<DecodedImage> {
  const { data, info } = await sharp(Buffer.from(bytes)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    pixel(x, y) {
      const i = (info.width * y + x) * 3;
      return [data[i]!, data[i + 1]!, data[i + 2]!, 255];
    },
  };
}

/** Every band of `count` bands of `bandDevicePx` device px, checked near both edges and in the middle. */
function expectBands(image: DecodedImage, count: number, bandDevicePx: number, tolerance: number, top = 0): void {
  const x = Math.floor(image.width / 2);
  for (let band = 0; band < count; band++) {
    const start = top + band * bandDevicePx;
    for (const y of [start + 4, start + bandDevicePx / 2, start + bandDevicePx - 5]) {
      expect(near(image.pixel(x, y), bandColour(band), tolerance), `band ${band} at y=${y}: ${image.pixel(x, y).join(',')}`).toBe(true);
    }
  }
}

describe('full-page captures on a scale-3 mobile preset, with 100vh heroes and lazy images far down', () => {
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

  const shoot = async (options: CaptureInput) => (await service.client.capture(options)).bytes;

  for (const format of ['png', 'jpeg'] as const) {
    for (const devicePx of [24_000, 60_000]) {
      it(`captures ${devicePx} device px on iphone-15 with fullPageScroll in ${format}, every band where the page put it`, async () => {
        const bands = devicePx / 3 / 1000;
        const bytes = await shoot({
          url: `${fixtures.url}/bands.html?bands=${bands}&height=1000`,
          device: 'iphone-15',
          fullPage: true,
          fullPageScroll: true,
          fullPageScrollDuration: 500,
          format,
        });
        const image = await decode(bytes);
        expect([image.width, image.height]).toEqual([IPHONE.width * IPHONE.scale, devicePx]);
        expectBands(image, bands, 3000, format === 'png' ? 12 : 20);
      });
    }
  }

  it('keeps a 100vh hero exactly the viewport tall at the top of a stitched page, on desktop and on iphone-15', async () => {
    const desktop = decodePng(
      await shoot({
        url: `${fixtures.url}/bands.html?bands=20&height=1000&hero=1`,
        viewportWidth: 400,
        viewportHeight: 600,
        fullPage: true,
      }),
    );
    expect([desktop.width, desktop.height]).toEqual([400, 20_600]);
    expect(near(desktop.pixel(200, 0), HERO_COLOUR)).toBe(true);
    expect(near(desktop.pixel(200, 599), HERO_COLOUR)).toBe(true);
    expect(near(desktop.pixel(200, 600), bandColour(0))).toBe(true);
    expectBands(desktop, 20, 1000, 12, 600);

    const phoneBytes = await shoot({
      url: `${fixtures.url}/bands.html?bands=8&height=1000&hero=1`,
      device: 'iphone-15',
      fullPage: true,
      fullPageScroll: true,
      fullPageScrollDuration: 500,
    });
    const phone = decodePng(phoneBytes);
    const heroPx = IPHONE.height * IPHONE.scale;
    expect([phone.width, phone.height]).toEqual([IPHONE.width * IPHONE.scale, heroPx + 24_000]);
    expect(near(phone.pixel(500, 1), HERO_COLOUR)).toBe(true);
    expect(near(phone.pixel(500, heroPx - 2), HERO_COLOUR)).toBe(true);
    expect(near(phone.pixel(500, heroPx + 2), bandColour(0))).toBe(true);
    expectBands(phone, 8, 3000, 12, heroPx);
  });

  it('loads and paints lazy images below 16 383 device px with fullPageScroll', async () => {
    const deepRequests = () => fixtures.requestsTo('/img/swatch.png').filter((r) => r.path.includes('deep=')).length;
    fixtures.reset();
    // Desktop: the images start at 17 000 px.
    const desktop = decodePng(
      await shoot({
        url: `${fixtures.url}/lazy-deep.html?top=17000&count=10`,
        viewportWidth: 800,
        viewportHeight: 600,
        fullPage: true,
        fullPageScroll: true,
        fullPageScrollDuration: 800,
      }),
    );
    expect(deepRequests()).toBe(10);
    expect(desktop.height).toBe(17_000 + 10 * 400);
    for (let n = 0; n < 10; n++) expect(near(desktop.pixel(150, 17_000 + n * 400 + 150), SWATCH_COLOUR), `image ${n + 1}`).toBe(true);

    fixtures.reset();
    // iphone-15: 6 000 CSS px are 18 000 device px.
    const phone = decodePng(
      await shoot({
        url: `${fixtures.url}/lazy-deep.html?top=6000&count=6`,
        device: 'iphone-15',
        fullPage: true,
        fullPageScroll: true,
        fullPageScrollDuration: 800,
      }),
    );
    expect(deepRequests()).toBe(6);
    expect(phone.height).toBe((6_000 + 6 * 400) * 3);
    for (let n = 0; n < 6; n++)
      expect(near(phone.pixel(450, (6_000 + n * 400 + 150) * 3), SWATCH_COLOUR), `phone image ${n + 1}`).toBe(true);
  });
});

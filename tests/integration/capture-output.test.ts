import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_PRESETS, LEGACY_DEVICE_CATEGORIES, resolveDevice } from '@daguerre/contract';
import { FixtureServer } from '../helpers/fixture-server.js';
import { colourfulPixels, dataUriBytes, decodePng, inkMask, jpegSize, maskDifference, near, webpSize } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/** navigator.platform each preset reports, by the preset's group (or Windows for a Windows agent). */
const PLATFORM_OF_GROUP: Record<string, string> = {
  Windows: 'Win32',
  iPhone: 'iPhone',
  iPad: 'iPad',
  Samsung: 'Linux armv81',
  Pixel: 'Linux armv81',
  'Other tablet': 'Linux armv81',
};

/** Output formats and sizes, device emulation, theme and fonts. */
describe('capture output: format, quality, scale, devices, theme, fonts', () => {
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

  it('encodes jpeg and webp with the requested quality: lower quality gives a smaller file', async () => {
    const url = `${fixtures.url}/noise.html`;
    const size = { viewportWidth: 800, viewportHeight: 600 };
    const jpegLow = await service.client.capture({ url, ...size, format: 'jpeg', imageQuality: 20 });
    const jpegHigh = await service.client.capture({ url, ...size, format: 'jpeg', imageQuality: 95 });
    expect(jpegLow.contentType).toBe('image/jpeg');
    expect(jpegSize(jpegLow.bytes)).toEqual({ width: 800, height: 600 });
    expect(jpegLow.bytes.length).toBeLessThan(jpegHigh.bytes.length * 0.6);

    const webpLow = await service.client.capture({ url, ...size, format: 'webp', imageQuality: 20 });
    const webpHigh = await service.client.capture({ url, ...size, format: 'webp', imageQuality: 95 });
    expect(webpLow.contentType).toBe('image/webp');
    expect(webpSize(webpLow.bytes)).toEqual({ width: 800, height: 600 });
    expect(webpLow.bytes.length).toBeLessThan(webpHigh.bytes.length * 0.6);

    const png = await service.client.capture({ url, ...size, format: 'png', imageQuality: 20 });
    expect(png.contentType).toBe('image/png');
    expect(decodePng(png.bytes).width).toBe(800);
  });

  it('multiplies the viewport by scaleFactor (400×300 at 2 → 800×600) and keeps the page layout', async () => {
    const html =
      '<body style="margin:0;background:#fff"><div style="position:absolute;left:0;top:0;width:200px;height:150px;background:rgb(200,30,30)"></div></body>';
    const file = await service.client.capture({ html, viewportWidth: 400, viewportHeight: 300, scaleFactor: 2 });
    const image = decodePng(file.bytes);
    expect([image.width, image.height]).toEqual([800, 600]);
    // The 200×150 CSS-px box covers 400×300 device pixels.
    expect(near(image.pixel(395, 295), [200, 30, 30])).toBe(true);
    expect(near(image.pixel(405, 305), [255, 255, 255])).toBe(true);

    const half = decodePng((await service.client.capture({ html, viewportWidth: 400, viewportHeight: 300, scaleFactor: 0.5 })).bytes);
    expect([half.width, half.height]).toEqual([200, 150]);
  });

  it('returns the file itself by default and JSON with a data URI when returnFile=false', async () => {
    const html = '<body style="margin:0;background:rgb(10,120,200)"></body>';
    const binary = await service.get(
      `/capture?${new URLSearchParams({ html, viewportWidth: '300', viewportHeight: '200', apiKey: service.apiKey })}`,
    );
    expect(binary.headers.get('content-type')).toBe('image/png');
    expect(decodePng(new Uint8Array(await binary.arrayBuffer())).width).toBe(300);

    const json = await service.get(
      `/capture?${new URLSearchParams({ html, viewportWidth: '300', viewportHeight: '200', returnFile: 'false', format: 'jpeg', apiKey: service.apiKey })}`,
    );
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await json.json()) as { success: boolean; data: { imageData: string; fileSize: number } };
    expect(body.success).toBe(true);
    expect(body.data.imageData.startsWith('data:image/jpeg;base64,')).toBe(true);
    const bytes = dataUriBytes(body.data.imageData);
    expect(bytes.length).toBe(body.data.fileSize);
    expect(jpegSize(bytes)).toEqual({ width: 300, height: 200 });
  });

  it('emulates every device preset and legacy name: viewport, scale, user agent, mobile and touch', async () => {
    const names = [...DEVICE_PRESETS.map((d) => d.id), ...Object.keys(LEGACY_DEVICE_CATEGORIES)] as Array<
      Parameters<typeof resolveDevice>[0]
    >;
    expect(names).toHaveLength(25);
    for (const name of names) {
      const preset = resolveDevice(name);
      const result = await service.client.captureJson({ url: `${fixtures.url}/device.html?tag=${name}`, device: name });
      const image = decodePng(dataUriBytes(result.data.imageData!));
      const where = `device ${name}`;
      expect([image.width, image.height], where).toEqual([
        Math.round(preset.width * preset.scale),
        Math.round(preset.height * preset.scale),
      ]);
      expect(near(image.pixel(image.width - 5, image.height - 5), [40, 160, 110]), where).toBe(true);

      const report = fixtures.reports(name).at(-1);
      expect(report, where).toBeDefined();
      expect(Number(report!.width), where).toBe(preset.width);
      expect(Number(report!.height), where).toBe(preset.height);
      expect(Number(report!.dpr), where).toBe(preset.scale);
      expect(report!.ua, where).toBe(preset.userAgent);
      expect(report!.touch, where).toBe(String(preset.touch));
      expect(report!.coarse, where).toBe(String(preset.touch));
      expect(Number(report!.maxTouchPoints) > 0, where).toBe(preset.touch);
      expect(report!.platform, where).toBe(PLATFORM_OF_GROUP[preset.userAgent.includes('Windows') ? 'Windows' : preset.group]);
      // The user agent also reaches the server in the request header.
      const documentRequest = fixtures.requestsTo('/device.html').find((r) => r.path.endsWith(`tag=${name}`));
      expect(documentRequest?.headers['user-agent'], where).toBe(preset.userAgent);
    }
    // The legacy names map to their presets.
    expect(resolveDevice('mobile').id).toBe('iphone-15');
    const iphone = fixtures.reports('mobile').at(-1)!;
    expect([Number(iphone.width), Number(iphone.dpr)]).toEqual([393, 3]);
  });

  it('sizes iphone-15 output at 1179×2556 and lets viewportWidth/Height override the preset (its scale stays)', async () => {
    const iphone = decodePng(
      (await service.client.capture({ url: `${fixtures.url}/device.html?tag=iphone-size`, device: 'iphone-15' })).bytes,
    );
    expect([iphone.width, iphone.height]).toEqual([1179, 2556]);

    const file = await service.client.capture({
      url: `${fixtures.url}/device.html?tag=override`,
      device: 'iphone-15',
      viewportWidth: 320,
      viewportHeight: 480,
    });
    const image = decodePng(file.bytes);
    expect([image.width, image.height]).toEqual([960, 1440]);
    const report = fixtures.reports('override').at(-1)!;
    expect([Number(report.width), Number(report.height), Number(report.dpr)]).toEqual([320, 480, 3]);
    expect(report.ua).toBe(resolveDevice('iphone-15').userAgent);
    expect(report.touch).toBe('true');

    // A desktop capture right after on the same pool has no touch or mobile left over.
    await service.client.capture({ url: `${fixtures.url}/device.html?tag=after-mobile`, viewportWidth: 500, viewportHeight: 400 });
    const desktop = fixtures.reports('after-mobile').at(-1)!;
    expect([desktop.width, desktop.dpr, desktop.touch, desktop.coarse]).toEqual(['500', '1', 'false', 'false']);
  });

  it('emulates prefers-color-scheme: light, dark, and auto leaves the page its default (light)', async () => {
    const url = `${fixtures.url}/theme.html`;
    const colourOf = async (theme: 'light' | 'dark' | 'auto') => {
      const image = decodePng((await service.client.capture({ url, theme, viewportWidth: 200, viewportHeight: 200 })).bytes);
      return image.pixel(100, 100);
    };
    expect(near(await colourOf('dark'), [20, 30, 60])).toBe(true);
    // auto right after dark: nothing of the previous emulation survives on the reused page.
    expect(near(await colourOf('auto'), [250, 240, 200])).toBe(true);
    expect(near(await colourOf('light'), [250, 240, 200])).toBe(true);
    expect(near(await colourOf('dark'), [20, 30, 60])).toBe(true);
  });

  it('renders CJK characters and colour emoji as glyphs, not missing-glyph boxes', async () => {
    const image = decodePng(
      (await service.client.capture({ url: `${fixtures.url}/glyphs.html`, viewportWidth: 800, viewportHeight: 400 })).bytes,
    );
    const cell = (column: number, row: number) => ({ x: column * 200 + 10, y: row * 200 + 10, width: 180, height: 180 });
    const masks = [0, 1, 2, 3].map((column) => inkMask(image, cell(column, 0)));
    const tofuA = inkMask(image, cell(2, 1));
    const tofuB = inkMask(image, cell(3, 1));
    // The method works: two code points without a glyph give the same box.
    expect(maskDifference(tofuA, tofuB)).toBeLessThan(0.01);
    for (const [i, mask] of masks.entries()) {
      const ink = mask.filter(Boolean).length / mask.length;
      expect(ink, `CJK character ${i} has ink`).toBeGreaterThan(0.03);
      expect(maskDifference(mask, tofuA), `CJK character ${i} differs from the missing-glyph box`).toBeGreaterThan(0.03);
      for (const other of masks.slice(i + 1)) expect(maskDifference(mask, other)).toBeGreaterThan(0.03);
    }
    // Emoji are in colour and differ from each other.
    const smile = cell(0, 1);
    const rocket = cell(1, 1);
    expect(colourfulPixels(image, smile)).toBeGreaterThan(2_000);
    expect(colourfulPixels(image, rocket)).toBeGreaterThan(1_000);
    expect(maskDifference(inkMask(image, smile, 200), inkMask(image, rocket, 200))).toBeGreaterThan(0.05);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { captureQuery, startTestService, type TestService } from '../helpers/test-service.js';

/** Colour of band i of bands.html (the same function as in the page). */
const bandColour = (i: number) => [(i * 67 + 40) % 256, (i * 139 + 90) % 256, (i * 29 + 160) % 256];

describe('the full-page budget, lowered through FULL_PAGE_MAX_HEIGHT_PX, for full pages and clipSelector', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000', FULL_PAGE_MAX_HEIGHT_PX: '20000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const capture = async (params: Record<string, string | number | boolean>) => {
    const response = await service.get(`/capture?${captureQuery({ ...params, apiKey: service.apiKey })}`);
    expect(
      response.status,
      await response
        .clone()
        .text()
        .then((t) => t.slice(0, 200)),
    ).toBe(200);
    return { truncated: response.headers.get('x-capture-truncated'), bytes: new Uint8Array(await response.arrayBuffer()) };
  };

  it('cuts a 30 000 px page at exactly 20 000 px and says X-Capture-Truncated: true', async () => {
    const cut = await capture({
      url: `${fixtures.url}/bands.html?bands=30&height=1000`,
      fullPage: true,
      viewportWidth: 400,
      viewportHeight: 600,
    });
    expect(cut.truncated).toBe('true');
    const image = decodePng(cut.bytes);
    expect([image.width, image.height]).toEqual([400, 20_000]);
    for (let band = 0; band < 20; band++) expect(near(image.pixel(200, band * 1000 + 500), bandColour(band)), `band ${band}`).toBe(true);
    expect(near(image.pixel(200, 19_998), bandColour(19))).toBe(true);

    // At scale 2 the same budget is 10 000 CSS px; a page inside the budget is whole and says false.
    const scaled = await capture({
      url: `${fixtures.url}/bands.html?bands=30&height=1000`,
      fullPage: true,
      viewportWidth: 200,
      viewportHeight: 300,
      scaleFactor: 2,
      format: 'jpeg',
    });
    expect(scaled.truncated).toBe('true');
    expect((await sharp(Buffer.from(scaled.bytes)).metadata()).height).toBe(20_000);
    const whole = await capture({
      url: `${fixtures.url}/bands.html?bands=18&height=1000`,
      fullPage: true,
      viewportWidth: 400,
      viewportHeight: 600,
    });
    expect(whole.truncated).toBe('false');
    expect(decodePng(whole.bytes).height).toBe(18_000);
  });

  it('tiles and stitches a clipSelector element taller than one frame, cut at the budget', async () => {
    /** A column of `bands` 1 000 px bands, 300 px wide and 300 px down the page, captured by clipSelector. */
    const bandsElement = (bands: number) =>
      capture({
        url: `${fixtures.url}/bands.html?bands=${bands}&height=1000&width=300&top=300`,
        clipSelector: '#bands',
        viewportWidth: 400,
        viewportHeight: 600,
      });
    // An 18 000 px element: whole, every band where the page put it.
    const tall = await bandsElement(18);
    expect(tall.truncated).toBe('false');
    const image = decodePng(tall.bytes);
    expect([image.width, image.height]).toEqual([300, 18_000]);
    for (let band = 0; band < 18; band++) {
      for (const y of [band * 1000 + 2, band * 1000 + 500, band * 1000 + 997])
        expect(near(image.pixel(150, y), bandColour(band)), `y=${y}`).toBe(true);
    }
    // A 40 000 px element: cut at 20 000 px, and said.
    const cut = await bandsElement(40);
    expect(cut.truncated).toBe('true');
    const cutImage = decodePng(cut.bytes);
    expect([cutImage.width, cutImage.height]).toEqual([300, 20_000]);
    expect(near(cutImage.pixel(150, 19_500), bandColour(19))).toBe(true);
  });

  it('cuts a very wide element and a very wide page at 16 383 px and says so', async () => {
    const element = await capture({
      url: `${fixtures.url}/bands.html?bands=2&height=150&width=20000`,
      clipSelector: '#bands',
      format: 'jpeg',
      viewportWidth: 400,
      viewportHeight: 600,
    });
    expect(element.truncated).toBe('true');
    const meta = await sharp(Buffer.from(element.bytes)).metadata();
    expect([meta.width, meta.height]).toEqual([16_383, 300]);
    const page = await capture({
      url: `${fixtures.url}/bands.html?bands=2&height=150&width=20000`,
      fullPage: true,
      format: 'jpeg',
      viewportWidth: 400,
      viewportHeight: 300,
    });
    expect(page.truncated).toBe('true');
    const pageMeta = await sharp(Buffer.from(page.bytes)).metadata();
    expect([pageMeta.width, pageMeta.height]).toEqual([16_383, 300]);
  });

  it('keeps transparency in a stitched png with omitBackground', async () => {
    const shot = await capture({
      url: `${fixtures.url}/bands.html?bands=18&height=1000&width=200`,
      fullPage: true,
      omitBackground: true,
      viewportWidth: 400,
      viewportHeight: 600,
    });
    const image = decodePng(shot.bytes);
    expect([image.width, image.height]).toEqual([400, 18_000]);
    for (const y of [10, 9_000, 17_990]) {
      expect(image.pixel(300, y)[3], `y=${y}`).toBe(0);
      expect(near(image.pixel(100, y), [...bandColour(Math.floor(y / 1000)), 255]), `y=${y}`).toBe(true);
    }
  });
});

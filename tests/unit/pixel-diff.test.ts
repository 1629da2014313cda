import { PNG } from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { compareCaptures } from '../../server/src/monitors/compare-captures.js';
import sharp from 'sharp';
import { closePixelDiff, diffPixels, ImageTooLarge, MAX_DIFF_PIXELS, UnreadableImage } from '../../server/src/monitors/pixel-diff.js';
import { antiAliasedText, block, countColour, makePng } from '../helpers/diff-images.js';

const WHITE: [number, number, number] = [255, 255, 255];
const HIGHLIGHT: [number, number, number] = [255, 0, 0];

afterAll(() => closePixelDiff());

describe('the pixel diff (pixelmatch in a worker thread)', () => {
  it('finds nothing in two identical images: 0 %, no region, no diff image', async () => {
    const png = makePng(200, 100, WHITE, block(10, 10, 50, 30, [20, 40, 200]));
    const result = await diffPixels(png, Buffer.from(png));
    expect(result).toEqual({ changedPixels: 0, diffPercent: 0, width: 200, height: 100, regions: [] });
  });

  it('counts a changed block exactly, boxes it, and highlights exactly its pixels over a dimmed copy of the newer image', async () => {
    const before = makePng(200, 100, WHITE);
    const after = makePng(200, 100, WHITE, block(30, 50, 40, 20, [20, 120, 60]));
    const result = await diffPixels(before, after);
    expect(result.changedPixels).toBe(800);
    expect(result.diffPercent).toBeCloseTo(4, 10);
    expect(result.regions).toEqual([{ x: 30, y: 50, width: 40, height: 20 }]);
    const image = PNG.sync.read(result.diffPng!);
    expect([image.width, image.height]).toEqual([200, 100]);
    expect(countColour(result.diffPng!, HIGHLIGHT)).toBe(800);
    // The rest is the newer image dimmed toward white (pixelmatch's grey background): never the highlight.
    const corner = [image.data[0], image.data[1], image.data[2]];
    expect(corner[0]).toBe(corner[1]);
    expect(corner[0]).toBeGreaterThan(200);
  });

  it('gives one region per separate change, largest first', async () => {
    const before = makePng(300, 200, WHITE);
    const after = makePng(300, 200, WHITE, (set) => {
      block(10, 10, 20, 10, [0, 0, 0])(set);
      block(150, 100, 60, 50, [200, 30, 30])(set);
    });
    const result = await diffPixels(before, after);
    expect(result.regions).toEqual([
      { x: 150, y: 100, width: 60, height: 50 },
      { x: 10, y: 10, width: 20, height: 10 },
    ]);
    expect(result.changedPixels).toBe(200 + 3000);
  });

  it('joins changes in neighbouring 16 px cells into one region', async () => {
    const before = makePng(200, 100, WHITE);
    // Two blocks 10 px apart: their cells touch, so they are one changed area.
    const after = makePng(200, 100, WHITE, (set) => {
      block(20, 20, 10, 10, [0, 0, 0])(set);
      block(40, 20, 10, 10, [0, 0, 0])(set);
    });
    expect((await diffPixels(before, after)).regions).toEqual([{ x: 20, y: 20, width: 30, height: 10 }]);
  });

  it('tolerates anti-aliased text re-rendered a quarter pixel off (pixelmatch counts thousands of pixels with includeAA)', async () => {
    const before = makePng(300, 140, WHITE, antiAliasedText(0));
    const after = makePng(300, 140, WHITE, antiAliasedText(0.25));
    const result = await diffPixels(before, after);
    expect(result.changedPixels).toBe(0);
    expect(result.regions).toEqual([]);
  });

  it('compares images of different heights on the taller canvas, the extra rows counted as changed', async () => {
    const before = makePng(100, 100, WHITE, block(10, 10, 20, 20, [0, 0, 0]));
    const after = makePng(100, 150, WHITE, block(10, 10, 20, 20, [0, 0, 0]));
    const result = await diffPixels(before, after);
    expect([result.width, result.height]).toEqual([100, 150]);
    expect(result.changedPixels).toBe(100 * 50);
    expect(result.diffPercent).toBeCloseTo((100 * 50 * 100) / (100 * 150), 10);
    expect(result.regions).toEqual([{ x: 0, y: 100, width: 100, height: 50 }]);
    const image = PNG.sync.read(result.diffPng!);
    expect([image.width, image.height]).toEqual([100, 150]);
  });

  it('compares images of different widths and heights on the larger of each, with the change inside the overlap too', async () => {
    const before = makePng(120, 80, WHITE);
    const after = makePng(100, 100, WHITE, block(40, 40, 10, 10, [0, 0, 0]));
    const result = await diffPixels(before, after);
    expect([result.width, result.height]).toEqual([120, 100]);
    // The overlap is 100×80: 100 changed pixels in it; the rest of 120×100 is the extra area.
    expect(result.changedPixels).toBe(100 + (120 * 100 - 100 * 80));
    expect(result.regions[result.regions.length - 1]).toEqual({ x: 40, y: 40, width: 10, height: 10 });
  });

  it('refuses images whose canvas has more than MAX_DIFF_PIXELS pixels before decoding them', async () => {
    const height = Math.floor(MAX_DIFF_PIXELS / 4000) + 1;
    const huge = await sharp({ create: { width: 4000, height, channels: 3, background: '#fff' } })
      .png({ compressionLevel: 1 })
      .toBuffer();
    await expect(diffPixels(makePng(10, 10, WHITE), huge)).rejects.toBeInstanceOf(ImageTooLarge);
    // Each image within the limit, but their canvas (the wider width × the taller height) is not.
    const wide = await sharp({ create: { width: 4000, height: 10, channels: 3, background: '#fff' } })
      .png()
      .toBuffer();
    const tall = await sharp({ create: { width: 10, height, channels: 3, background: '#fff' } })
      .png()
      .toBuffer();
    await expect(diffPixels(wide, tall)).rejects.toBeInstanceOf(ImageTooLarge);
  });

  it('refuses bytes that are not an image', async () => {
    await expect(diffPixels(Buffer.from('not a png'), makePng(10, 10, WHITE))).rejects.toBeInstanceOf(UnreadableImage);
  });
});

describe('compareCaptures', () => {
  const before = makePng(200, 100, WHITE);
  const after = makePng(200, 100, WHITE, block(0, 0, 20, 10, [0, 0, 0]));

  it('says changed and gives the diff image when the percent reaches the threshold', async () => {
    const { diff, diffPng } = await compareCaptures({
      before: { png: before, text: 'a\nb' },
      after: { png: after, text: 'a\nc' },
      threshold: 1,
    });
    expect(diff).toMatchObject({ diffPercent: 1, changed: true, threshold: 1, changedPixels: 200, textAdded: ['c'], textRemoved: ['b'] });
    expect(diffPng).toBeInstanceOf(Buffer);
  });

  it('says unchanged, with no diff image, below the threshold; and never changed at 0 %', async () => {
    const below = await compareCaptures({ before: { png: before }, after: { png: after }, threshold: 1.5 });
    expect(below.diff.changed).toBe(false);
    expect(below.diff.diffPercent).toBe(1);
    expect(below.diffPng).toBeUndefined();
    const same = await compareCaptures({ before: { png: before }, after: { png: before }, threshold: 0 });
    expect(same.diff.changed).toBe(false);
    expect(same.diffPng).toBeUndefined();
  });

  it('compares text only when both sides have one', async () => {
    const { diff } = await compareCaptures({ before: { png: before }, after: { png: before, text: 'new line' }, threshold: 1 });
    expect(diff.textAdded).toEqual([]);
    expect(diff.textRemoved).toEqual([]);
  });
});

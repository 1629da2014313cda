import { PNG } from 'pngjs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { isOneColour } from '../../server/src/capture/output/blank-image.js';
import { compactPng, encodingsFor, lookAtPng } from '../../server/src/capture/output/png-encoder.js';
import { pngCompressionRatio, rawPngBytes } from '../../server/src/capture/output/png-header.js';

/** A PNG of flat bands (screen-like) with half-transparent pixels, written fast and unfiltered as Chromium's fast mode does. */
function samplePng(): { png: Buffer; rgba: Buffer } {
  const image = new PNG({ width: 320, height: 200, colorType: 6 });
  for (let y = 0; y < 200; y++)
    for (let x = 0; x < 320; x++) {
      const i = (y * 320 + x) * 4;
      image.data[i] = (Math.floor(x / 40) * 37) % 256;
      image.data[i + 1] = (Math.floor(y / 25) * 53) % 256;
      image.data[i + 2] = (x * y) % 7 === 0 ? 255 : 20;
      image.data[i + 3] = x < 160 ? 255 : 128;
    }
  return { png: PNG.sync.write(image, { deflateLevel: 1, filterType: 0 }), rgba: Buffer.from(image.data) };
}

/** An opaque RGB PNG of `width`×`height` whose pixels come from `pixel`, written as Chromium's fast mode does (Up filter, level 1; `filterType` to write another). */
function rgbPng(width: number, height: number, pixel: (x: number, y: number) => [number, number, number], filterType = 2): Buffer {
  const image = new PNG({ width, height, colorType: 2, inputColorType: 6, inputHasAlpha: true });
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const [r, g, b] = pixel(x, y);
      image.data[i] = r;
      image.data[i + 1] = g;
      image.data[i + 2] = b;
      image.data[i + 3] = 255;
    }
  return PNG.sync.write(image, { deflateLevel: 1, filterType, colorType: 2, inputColorType: 6, inputHasAlpha: true });
}

/** Lines of antialiased "glyphs" on white: a few grey levels (dark type) or `ink` and its blends (coloured type). */
function textPixel(ink: [number, number, number] = [0, 0, 0]) {
  return (x: number, y: number): [number, number, number] => {
    if (y % 22 >= 14 || grain(Math.floor(x / 3), y % 22) > 28) return [255, 255, 255];
    const cover = (grain(x, y) & 3) / 3;
    return ink.map((c) => Math.round(255 - (255 - c) * cover)) as [number, number, number];
  };
}

/** Decoded to RGB by libvips (a grey file comes back with its one channel spread to three). */
const rgbOf = (png: Buffer) => sharp(png).toColourspace('srgb').removeAlpha().raw().toBuffer();

/** Deterministic noise: a photograph's grain, which no filter makes compress like screen content. */
function grain(x: number, y: number): number {
  let h = (x * 374761393 + y * 668265263) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 1274126177) >>> 0;
  return (h >>> 24) & 0x3f;
}

describe('compactPng', () => {
  it('writes the same RGBA pixels, alpha included, in fewer bytes', async () => {
    const { png, rgba } = samplePng();
    const out = await compactPng(png);
    expect(out.length).toBeLessThan(png.length);
    const decoded = PNG.sync.read(out);
    expect([decoded.width, decoded.height]).toEqual([320, 200]);
    expect(Buffer.from(decoded.data).equals(rgba)).toBe(true);
  });

  it('returns a file it cannot read as it came (a capture never fails for compression)', async () => {
    const junk = Buffer.from('not a png at all');
    await expect(compactPng(junk)).resolves.toBe(junk);
  });

  it('keeps the pixels of a photographic image, which gets the filtered encoding', async () => {
    const png = rgbPng(256, 160, (x, y) => [(x + grain(x, y)) & 255, (y * 2 + grain(y, x)) & 255, (x + y) & 255]);
    expect(encodingsFor(png).every((settings) => settings.adaptiveFiltering)).toBe(true);
    const out = await compactPng(png);
    expect(out.length).toBeLessThanOrEqual(png.length);
    expect(Buffer.from(PNG.sync.read(out).data).equals(Buffer.from(PNG.sync.read(png).data))).toBe(true);
  });
});

describe('grey images', () => {
  // 400 px takes the four-pixels-at-a-time path, 398 px the one a byte at a time.
  it.each([400, 398])('writes an image of grey pixels %i px wide as one grey channel, the same pixels in fewer bytes', async (width) => {
    const png = rgbPng(width, 300, textPixel());
    // Dense text: between photograph and screen content, where the rows are read.
    expect(pngCompressionRatio(png)!).toBeGreaterThan(6);
    expect(pngCompressionRatio(png)!).toBeLessThan(18);
    expect((await lookAtPng(png)).grey?.plane.length).toBe(width * 300);
    const out = await compactPng(png);
    expect(out[25]).toBe(0); // colour type 0: grey
    const colour = await sharp(png).png({ compressionLevel: 6, adaptiveFiltering: false }).toBuffer();
    expect(out.length).toBeLessThan(colour.length);
    expect((await rgbOf(out)).equals(await rgbOf(png))).toBe(true);
  });

  it('keeps the colour encoding for an image grey but for one pixel at its bottom', async () => {
    const grey = textPixel();
    const png = rgbPng(400, 300, (x, y) => (x === 399 && y === 299 ? [250, 255, 255] : grey(x, y)));
    expect(await lookAtPng(png)).toEqual({ colours: 5 });
    const out = await compactPng(png);
    expect(out[25]).toBe(2);
    expect((await rgbOf(out)).equals(await rgbOf(png))).toBe(true);
  });

  it('does not read rows written with filters other than None and Up (the ratio alone decides)', async () => {
    const png = rgbPng(400, 300, textPixel(), 4);
    expect(await lookAtPng(png)).toEqual({ colours: Infinity });
    expect((await rgbOf(await compactPng(png))).equals(await rgbOf(png))).toBe(true);
  });
});

describe('choosing the encoding from the fast PNG', () => {
  it('gives screen content (flat colours) the unfiltered encoding only', () => {
    const png = rgbPng(400, 300, (x, y) => (Math.floor(y / 30) % 2 === 0 ? [250, 250, 250] : [20 + (x % 3), 40, 200]));
    expect(pngCompressionRatio(png)!).toBeGreaterThan(18);
    expect(encodingsFor(png)).toEqual([{ compressionLevel: 6, adaptiveFiltering: false }]);
  });

  /** A PNG's first 33 bytes for 1000×1000 RGB (3 000 000 bytes of pixels), padded to `bytes`: its ratio is 3e6 ÷ bytes. */
  const ofRatio = (ratio: number) => {
    const file = Buffer.alloc(Math.floor(3_000_000 / ratio));
    Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').copy(file);
    file.writeUInt32BE(1000, 16);
    file.writeUInt32BE(1000, 20);
    file[24] = 8; // bit depth
    file[25] = 2; // RGB
    return file;
  };
  const none6 = { compressionLevel: 6, adaptiveFiltering: false };
  const adaptive7 = { compressionLevel: 7, adaptiveFiltering: true };
  const adaptive6 = { compressionLevel: 6, adaptiveFiltering: true };

  it.each([
    [40, [none6]],
    [18, [none6]],
    [15, [none6, adaptive7]],
    [12, [none6, adaptive7]],
    [9, [adaptive7]],
    [6, [adaptive7]],
    [4.8, [adaptive6]],
  ])('at %f:1 (pixels ÷ fast PNG) chooses %j', (ratio, expected) => {
    expect(pngCompressionRatio(ofRatio(ratio))).toBeCloseTo(ratio, 3);
    expect(encodingsFor(ofRatio(ratio))).toEqual(expected);
  });

  it.each([
    [15, 300, [none6]],
    [9, 1112, [none6]],
    [9, 4096, [none6]],
    [9, 4097, [adaptive7]],
    [15, 50_000, [none6, adaptive7]],
    [40, 50_000, [none6]],
    [4.8, 200, [adaptive6]],
  ])('at %f:1 with %i colours chooses %j', (ratio, colours, expected) => {
    expect(encodingsFor(ofRatio(ratio), colours)).toEqual(expected);
  });

  it('counts the colours of text (coloured type and its blends with white), and stops past the limit on gradients', async () => {
    const text = await lookAtPng(rgbPng(400, 300, textPixel([6, 69, 173])));
    expect(text.grey).toBeUndefined();
    expect(text.colours).toBe(4); // white, the ink and its two blends
    const gradient = await lookAtPng(rgbPng(400, 300, (x, y) => [x % 256, y % 256, (x + y) % 256]));
    expect(gradient.colours).toBe(4097);
  });

  it('gives a file it cannot read for its size one encoding, the filtered one', () => {
    expect(encodingsFor(Buffer.from('not a png at all'))).toEqual([{ compressionLevel: 7, adaptiveFiltering: true }]);
  });
});

describe('rawPngBytes', () => {
  it('reads width × height × channels from the header, without decoding', () => {
    expect(rawPngBytes(samplePng().png)).toBe(320 * 200 * 4);
    expect(rawPngBytes(rgbPng(30, 20, () => [1, 2, 3]))).toBe(30 * 20 * 3);
  });

  it('says nothing of what is not an 8-bit PNG', () => {
    expect(rawPngBytes(Buffer.from('GIF89a and then some bytes to pass the length check'))).toBeUndefined();
    const sixteenBit = PNG.sync.write(new PNG({ width: 4, height: 4, bitDepth: 16 }), { bitDepth: 16 } as never);
    expect(rawPngBytes(sixteenBit)).toBeUndefined();
  });
});

describe('isOneColour', () => {
  it('finds a one-colour PNG (which compresses far past the shortcut) by its pixels', async () => {
    const blank = rgbPng(640, 400, () => [255, 255, 255]);
    expect(pngCompressionRatio(blank)!).toBeGreaterThan(100);
    await expect(isOneColour(blank)).resolves.toBe(true);
  });

  it('answers a busy PNG from its size alone, and a nearly blank one from its pixels', async () => {
    const busy = rgbPng(320, 200, (x, y) => [grain(x, y) * 4, grain(y, x) * 4, 128]);
    expect(pngCompressionRatio(busy)!).toBeLessThan(100);
    await expect(isOneColour(busy)).resolves.toBe(false);
    // One dark dot on white compresses past the shortcut: only the pixels can tell.
    const dot = rgbPng(640, 400, (x, y) => (x === 300 && y === 300 ? [0, 0, 0] : [255, 255, 255]));
    expect(pngCompressionRatio(dot)!).toBeGreaterThan(100);
    await expect(isOneColour(dot)).resolves.toBe(false);
  });
});

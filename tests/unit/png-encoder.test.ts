import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { compactPng } from '../../server/src/capture/png-encoder.js';

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
});

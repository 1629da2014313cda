import { PNG } from 'pngjs';

export type Rgb = [number, number, number];

/** A PNG of `width`×`height` in `background`, with `draw` setting pixels (r, g, b; opaque). */
export function makePng(
  width: number,
  height: number,
  background: Rgb,
  draw?: (set: (x: number, y: number, colour: Rgb) => void) => void,
): Buffer {
  const png = new PNG({ width, height });
  const set = (x: number, y: number, [r, g, b]: Rgb) => {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    const i = (y * width + x) * 4;
    png.data[i] = r;
    png.data[i + 1] = g;
    png.data[i + 2] = b;
    png.data[i + 3] = 255;
  };
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) set(x, y, background);
  draw?.(set);
  return PNG.sync.write(png);
}

/** Fills a rectangle. */
export const block = (x0: number, y0: number, w: number, h: number, colour: Rgb) => (set: (x: number, y: number, colour: Rgb) => void) => {
  for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) set(x, y, colour);
};

/**
 * Dark "text" drawn with anti-aliased edges: rows of rings whose coverage is computed per pixel, as
 * a rasterizer smooths glyph outlines. `offset` moves everything by a fraction of a pixel, as a
 * re-rendered page does when a font hints differently.
 */
export function antiAliasedText(offset: number) {
  return (set: (x: number, y: number, colour: Rgb) => void) => {
    for (let row = 0; row < 4; row++) {
      for (let letter = 0; letter < 12; letter++) {
        const cx = 20 + letter * 22 + offset;
        const cy = 20 + row * 30 + offset;
        for (let y = Math.floor(cy - 10); y <= Math.ceil(cy + 10); y++) {
          for (let x = Math.floor(cx - 10); x <= Math.ceil(cx + 10); x++) {
            // Coverage of a ring of radius 7 and width 2.5 (a letter "o"), sampled 4×4 within the pixel.
            let inside = 0;
            for (let sy = 0; sy < 4; sy++)
              for (let sx = 0; sx < 4; sx++) {
                const d = Math.hypot(x + (sx + 0.5) / 4 - cx, y + (sy + 0.5) / 4 - cy);
                if (d > 5.75 && d < 8.25) inside++;
              }
            if (inside === 0) continue;
            const v = Math.round(255 - (inside / 16) * (255 - 20));
            set(x, y, [v, v, v]);
          }
        }
      }
    }
  };
}

/** Pixels of a decoded PNG that are `colour` (within `tolerance` on each channel). */
export function countColour(pngBytes: Uint8Array, colour: Rgb, tolerance = 0): number {
  const png = PNG.sync.read(Buffer.from(pngBytes));
  let count = 0;
  for (let i = 0; i < png.data.length; i += 4) {
    if (
      Math.abs(png.data[i]! - colour[0]) <= tolerance &&
      Math.abs(png.data[i + 1]! - colour[1]) <= tolerance &&
      Math.abs(png.data[i + 2]! - colour[2]) <= tolerance
    )
      count++;
  }
  return count;
}

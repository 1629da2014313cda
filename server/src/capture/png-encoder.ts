import sharp, { type PngOptions } from 'sharp';
import { pngCompressionRatio } from './png-header.js';
import type { RenderResult } from './render-result.js';

/*
 * Chromium's default PNG encoder makes normal-size files but is slow (50–350 ms more than its fast
 * mode at 1920×1080 here, measured on the bench's page set), and it runs while the capture holds
 * its browser slot; with optimizeForSpeed (every row Up-filtered, zlib level 1) it is fast but the
 * files are 1.3–1.8× larger. So the renderer takes the fast PNG and this module re-encodes it with
 * libvips (sharp's own binary, zlib-ng), started as soon as the screenshot is back, while the
 * page report and the quality report are read (renderer.ts).
 *
 * Settings chosen by measurement (docs/performance.md, "PNG size"), against Chromium's default file
 * of the same page (1920×1080, sizes ÷ Chromium's, times of the encoding alone):
 * - screen content (text, flat colours, charts) compresses best without row filters: level 6, no
 *   filter is 0.90–0.99× in 12–21 ms, where adaptive filters are 1.02–1.09×;
 * - smooth gradients and drawn pictures need filters: adaptive at level 7 is 1.03× (130 ms), where
 *   no filter is 1.35×; level 6 is 1.05× there, too close to the limit;
 * - a photograph filling the view: adaptive at level 6 is 0.99× in 240 ms; level 7 buys 3 % for
 *   150 ms more, past Chromium's own 346 ms.
 *
 * Which kind an image is, is read for free from the fast PNG itself: its raw size over its bytes.
 * Screen content compresses 20–80× even at level 1; gradients 8–12×; a photograph under 6×. Between
 * screen content and gradients both encodings run side by side (two libvips threads) and the smaller
 * wins, so a misjudged image there costs time, never bytes.
 */
const SCREEN_CONTENT = { compressionLevel: 6, adaptiveFiltering: false } as const;
const DRAWN = { compressionLevel: 7, adaptiveFiltering: true } as const;
const PHOTOGRAPH = { compressionLevel: 6, adaptiveFiltering: true } as const;
/** Raw bytes over fast-PNG bytes at or above which the image is screen content (no filter only). */
const SCREEN_CONTENT_RATIO = 18;
/** … below which it has gradients or drawn pictures (filters only) … */
const DRAWN_RATIO = 12;
/** … and below which it is mostly photograph. */
const PHOTOGRAPH_RATIO = 6;

// Every capture is a new image: libvips' operation cache would only hold memory.
sharp.cache(false);

/** Which encodings an image gets, judged from how well its fast PNG compressed. */
export function encodingsFor(png: Buffer): PngOptions[] {
  const ratio = pngCompressionRatio(png) ?? 0;
  if (ratio >= SCREEN_CONTENT_RATIO) return [SCREEN_CONTENT];
  if (ratio >= DRAWN_RATIO) return [SCREEN_CONTENT, DRAWN];
  // A file it cannot read for its size (ratio 0) gets the encoding that suits every kind best.
  if (ratio >= PHOTOGRAPH_RATIO || ratio === 0) return [DRAWN];
  return [PHOTOGRAPH];
}

/**
 * The same pixels in a smaller PNG (8-bit, the input's channels; no metadata). A file that
 * libvips cannot read, or one the re-encoding would not make smaller, is returned as it came:
 * a capture never fails, or grows, for the sake of compression.
 */
export async function compactPng(png: Buffer): Promise<Buffer> {
  try {
    // One streaming pipeline per encoding (decode into encode, no raw copy of the image in between).
    const encode = (settings: PngOptions) => sharp(png, { limitInputPixels: false }).png(settings).toBuffer();
    const candidates = await Promise.all(encodingsFor(png).map(encode));
    const best = candidates.reduce((smallest, candidate) => (candidate.length < smallest.length ? candidate : smallest));
    return best.length < png.length ? best : png;
  } catch {
    return png;
  }
}

/** A render result with its PNG compacted (timed as `encode`); other formats pass through. */
export async function compactRenderResult<T extends RenderResult>(result: T, timings?: Record<string, number>): Promise<T> {
  if (result.mime !== 'image/png') return result;
  const started = Date.now();
  const buffer = await compactPng(result.buffer);
  if (timings) timings.encode = Date.now() - started;
  return { ...result, buffer };
}

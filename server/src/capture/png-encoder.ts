import sharp, { type PngOptions } from 'sharp';
import { pngCompressionRatio } from './png-header.js';
import type { RenderResult } from './render-result.js';

/*
 * Chromium's default PNG encoder makes normal-size files but is slow (25–120 ms more than its fast
 * mode at 1920×1080 here, measured on the bench's page set), and it runs while the capture holds
 * its browser slot; with optimizeForSpeed (every row Up-filtered, zlib level 1) it is fast but the
 * files are 1.4–1.8× larger. So the renderer takes the fast PNG and this module re-encodes it with
 * libvips (sharp's own binary, zlib-ng), started as soon as the screenshot is back, while the
 * page report and the quality report are read (renderer.ts).
 *
 * Settings chosen by measurement (docs/performance.md, "PNG size"). Screen content (text, flat
 * colours) compresses best without row filters: zlib level 6, no filter, is 0.90–0.99× Chromium's
 * default in 12–17 ms. Gradients and photographic areas need filters: adaptive filtering at level
 * 7 comes within 1.03× of Chromium (60–130 ms), where no filter is 1.35×.
 *
 * Which kind an image is, is read for free from the fast PNG itself: its raw size over its bytes.
 * Screen content compresses 20–80× even at level 1; a page of gradients or pictures 8–12×. Between
 * the two thresholds both encodings run side by side (two libvips threads) and the smaller wins,
 * so a misjudged image costs time, never bytes.
 */
const SCREEN_CONTENT = { compressionLevel: 6, adaptiveFiltering: false } as const;
const PHOTOGRAPHIC = { compressionLevel: 7, adaptiveFiltering: true } as const;
/** Raw bytes over fast-PNG bytes at or above which the image is screen content (no filter only). */
const SCREEN_CONTENT_RATIO = 18;
/** … and below which it is photographic (filters only). */
const PHOTOGRAPHIC_RATIO = 12;

// Every capture is a new image: libvips' operation cache would only hold memory.
sharp.cache(false);

/** Which encodings an image gets, judged from how well its fast PNG compressed. */
export function encodingsFor(png: Buffer): PngOptions[] {
  const ratio = pngCompressionRatio(png) ?? 0;
  if (ratio >= SCREEN_CONTENT_RATIO) return [SCREEN_CONTENT];
  if (ratio < PHOTOGRAPHIC_RATIO) return [PHOTOGRAPHIC];
  return [SCREEN_CONTENT, PHOTOGRAPHIC];
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

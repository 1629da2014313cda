import sharp, { type PngOptions } from 'sharp';
import type { RenderResult } from './render-result.js';

/*
 * Chromium's default PNG encoder makes normal-size files but is slow (50–80 ms more than its fast
 * mode at 1280×800–1920×1080 here), and it runs while the capture holds its browser slot; with
 * optimizeForSpeed it is fast but the files are 1.4–1.6× larger. So the renderer takes the fast
 * PNG and this module re-encodes it with libvips (sharp's own binary, zlib-ng) once the slot is
 * back in the pool: the next capture renders meanwhile.
 *
 * Settings chosen by measurement (README, "PNG size"). Screen content (text, flat colours)
 * compresses best without row filters: zlib level 4, no filter, is 0.98× Chromium's default on the
 * bench page in about 10 ms (level 6: 0.95× in 16 ms; level 3: 1.00× in 8 ms). Photographic areas need filters: there adaptive filtering at level 7
 * comes within 1.03× of Chromium (about 60 ms), where no filter is 1.25×. An image that compresses
 * poorly without filters (less than SCREEN_CONTENT_RATIO) gets the second encoding too, and the
 * smaller file is kept.
 */
const SCREEN_CONTENT = { compressionLevel: 4, adaptiveFiltering: false } as const;
const PHOTOGRAPHIC = { compressionLevel: 7, adaptiveFiltering: true } as const;
/** Raw bytes over unfiltered PNG bytes below which filters are worth trying (bench page ~36, a page with a large picture ~9). */
const SCREEN_CONTENT_RATIO = 20;

// Every capture is a new image: libvips' operation cache would only hold memory.
sharp.cache(false);

/**
 * The same pixels in a smaller PNG (8-bit, the input's channels; no metadata). A file that
 * libvips cannot read, or one the re-encoding would not make smaller, is returned as it came:
 * a capture never fails, or grows, for the sake of compression.
 */
export async function compactPng(png: Buffer): Promise<Buffer> {
  try {
    // One streaming pipeline (decode into encode, no raw copy of the image in between).
    const encode = (settings: PngOptions) => sharp(png, { limitInputPixels: false }).png(settings).toBuffer({ resolveWithObject: true });
    const { data, info } = await encode(SCREEN_CONTENT);
    let best = data;
    if ((info.width * info.height * info.channels) / data.length < SCREEN_CONTENT_RATIO) {
      const filtered = (await encode(PHOTOGRAPHIC)).data;
      if (filtered.length < best.length) best = filtered;
    }
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

import type { Page } from 'puppeteer-core';
import sharp from 'sharp';
import { CaptureError } from '../capture-error.js';
import { FRAME_LIMIT_PX, type FullPagePlan } from './full-page-plan.js';

export interface FullPageShot {
  buffer: Buffer;
  /** Whether the region was cut to the full-page budget (the plan says so; never for time). */
  truncated: boolean;
}

export interface StitchFormat {
  type: 'png' | 'jpeg' | 'webp';
  quality?: number;
}

/**
 * Captures the planned region (its top-left corner at `origin`, CSS px from the top-left of the
 * document) as PNG tiles, each one Chromium frame, and joins them with sharp (libvips' arrayjoin,
 * which streams the tiles into the output instead of blending each one over a whole canvas), so
 * no single screenshot asks Chromium for a frame past its limit.
 *
 * Every planned tile is taken: a busy machine makes the capture slower, never shorter. Stopping
 * the tiles when the deadline seemed near gave 16 000 px images of a 32 960 px page under load, a
 * cut that looked like the page; past its deadline a capture now ends in 504 CAPTURE_TIMEOUT
 * (nothing charged) instead (docs/capture-fidelity.md, "Late pictures and pages that change while
 * they are taken").
 */
export async function captureTiles(
  page: Page,
  plan: FullPagePlan,
  origin: { x: number; y: number },
  scale: number,
  format: StitchFormat,
): Promise<FullPageShot> {
  const width = Math.round(plan.width * scale);
  const pngs: Buffer[] = [];
  let height = 0;
  for (const tile of plan.tiles) {
    const png = Buffer.from(
      await page.screenshot({
        type: 'png',
        optimizeForSpeed: true,
        captureBeyondViewport: true,
        clip: { x: origin.x, y: origin.y + tile.y, width: plan.width, height: tile.height },
      }),
    );
    pngs.push(png);
    height += (await sharp(png).metadata()).height ?? Math.round(tile.height * scale);
  }
  // arrayjoin makes every cell as tall as the tallest tile: the last, shorter one is padded, so the
  // output is cut back to the tiles' own height.
  // (sharp joins two images or more; one tile is the image.)
  const joined = (
    pngs.length > 1
      ? sharp(pngs, { join: { across: 1, valign: 'top' }, limitInputPixels: false })
      : sharp(pngs[0], { limitInputPixels: false })
  ).extract({
    left: 0,
    top: 0,
    width,
    height,
  });
  const quality = format.quality ?? 80;
  // Huffman optimisation is a second pass over a very large image: about 3× slower, for a few per cent.
  const encoded =
    format.type === 'png'
      ? joined.png({ compressionLevel: 1 })
      : format.type === 'jpeg'
        ? joined.flatten({ background: '#ffffff' }).jpeg({ quality, optimiseCoding: false })
        : joined.webp({ quality });
  return { buffer: await encoded.toBuffer(), truncated: plan.truncated };
}

/** WebP cannot hold more than 16 383 px per side: refuse rather than return an empty or cut file. */
export function webpTooLarge(size: { width: number; height: number }, scale: number, what = 'this full page'): CaptureError {
  const width = Math.ceil(size.width * scale);
  const height = Math.ceil(size.height * scale);
  return new CaptureError(
    'image-too-large',
    `format: webp holds at most ${FRAME_LIMIT_PX} px per side, and ${what} is ${width}×${height} device px; use format png or jpeg; nothing was charged`,
  );
}

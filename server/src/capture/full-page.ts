import type { Page } from 'puppeteer-core';
import sharp from 'sharp';
import { ApiError } from '../errors.js';
import { FRAME_LIMIT_PX, type FullPagePlan, type Tile } from './full-page-plan.js';

export interface FullPageShot {
  buffer: Buffer;
  /** The plan as captured: cut short (and truncated) when the deadline came first. */
  plan: FullPagePlan;
  /** Whether the region was cut, by the budget or by the deadline. */
  truncated: boolean;
}

export interface StitchFormat {
  type: 'png' | 'jpeg' | 'webp';
  quality?: number;
}

/**
 * Device pixels per second the stitching is assumed to encode at, to leave it time before the
 * deadline (measured here: a 16 383 × 11 744 jpeg in 2.4 s, so about 80 Mpx/s; a quarter of that
 * for a loaded machine and busier content).
 */
const STITCH_PIXELS_PER_SECOND = 20_000_000;

/**
 * Captures the planned region (its top-left corner at `origin`, CSS px from the top-left of the
 * document) as PNG tiles, each one Chromium frame, and joins them with sharp (libvips' arrayjoin,
 * which streams the tiles into the output instead of blending each one over a whole canvas), so
 * no single screenshot asks Chromium for a frame past its limit.
 *
 * `stopBy` (epoch ms) is when the stitched image must be ready: tiles that would not leave time
 * to stitch before it are not taken, and the image is cut (truncated) there instead of the
 * capture running into its deadline.
 */
export async function captureTiles(
  page: Page,
  plan: FullPagePlan,
  origin: { x: number; y: number },
  scale: number,
  format: StitchFormat,
  stopBy = Number.POSITIVE_INFINITY,
): Promise<FullPageShot> {
  const width = Math.round(plan.width * scale);
  const pngs: Buffer[] = [];
  const taken: Tile[] = [];
  let height = 0;
  const started = Date.now();
  for (const tile of plan.tiles) {
    if (taken.length > 0) {
      const perTile = (Date.now() - started) / taken.length;
      const stitchMs = ((width * (height + tile.height * scale)) / STITCH_PIXELS_PER_SECOND) * 1000;
      if (Date.now() + perTile + stitchMs > stopBy) break;
    }
    const png = Buffer.from(
      await page.screenshot({
        type: 'png',
        optimizeForSpeed: true,
        captureBeyondViewport: true,
        clip: { x: origin.x, y: origin.y + tile.y, width: plan.width, height: tile.height },
      }),
    );
    pngs.push(png);
    taken.push(tile);
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
  const cut = taken.length < plan.tiles.length;
  const done = cut ? { ...plan, height: taken.reduce((sum, tile) => sum + tile.height, 0), tiles: taken, truncated: true } : plan;
  return { buffer: await encoded.toBuffer(), plan: done, truncated: done.truncated };
}

/** WebP cannot hold more than 16 383 px per side: refuse rather than return an empty or cut file. */
export function webpTooLarge(size: { width: number; height: number }, scale: number, what = 'this full page'): ApiError {
  const width = Math.ceil(size.width * scale);
  const height = Math.ceil(size.height * scale);
  return new ApiError(
    'INVALID_INPUT',
    `format: webp holds at most ${FRAME_LIMIT_PX} px per side, and ${what} is ${width}×${height} device px; use format png or jpeg; nothing was charged`,
  );
}

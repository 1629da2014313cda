import type { Page } from 'puppeteer';
import sharp, { type OverlayOptions } from 'sharp';
import { ApiError } from '../errors.js';
import { FRAME_LIMIT_PX, planFullPage, type FullPageBudget, type FullPagePlan } from './full-page-plan.js';

export interface FullPageShot {
  buffer: Buffer;
  plan: FullPagePlan;
}

/**
 * Captures a document of any height as PNG tiles (each one Chromium frame) and joins them with
 * sharp (libvips), which writes the tiles into one output image instead of asking Chromium for a
 * frame past its 16 383 px limit.
 */
export async function captureFullPage(
  page: Page,
  size: { width: number; height: number },
  scale: number,
  format: { type: 'png' | 'jpeg'; quality?: number },
  budget?: FullPageBudget,
): Promise<FullPageShot> {
  const plan = planFullPage(size, scale, budget);
  const inputs: OverlayOptions[] = [];
  let top = 0;
  for (const tile of plan.tiles) {
    const png = Buffer.from(
      await page.screenshot({ type: 'png', optimizeForSpeed: true, captureBeyondViewport: true, clip: { x: 0, y: tile.y, width: plan.width, height: tile.height } }),
    );
    const meta = await sharp(png).metadata();
    inputs.push({ input: png, left: 0, top });
    top += meta.height ?? Math.round(tile.height * scale);
  }
  const width = Math.round(plan.width * scale);
  const canvas = sharp({ create: { width, height: top, channels: 3, background: '#ffffff' }, limitInputPixels: false }).composite(inputs);
  const buffer = format.type === 'png' ? await canvas.png().toBuffer() : await canvas.jpeg({ quality: format.quality ?? 80 }).toBuffer();
  return { buffer, plan };
}

/** WebP cannot hold more than 16 383 px per side: refuse rather than return an empty or cut file. */
export function webpTooLarge(size: { width: number; height: number }, scale: number): ApiError {
  const width = Math.ceil(size.width * scale);
  const height = Math.ceil(size.height * scale);
  return new ApiError(
    'INVALID_INPUT',
    `format: webp holds at most ${FRAME_LIMIT_PX} px per side, and this full page is ${width}×${height} device px; use format png or jpeg; nothing was charged`,
  );
}

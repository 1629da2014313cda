/**
 * Plans a full-page (or large element) capture as horizontal tiles, each small enough for one
 * Chromium frame, and cuts the region at a budget so that no capture can ask the browser for a
 * frame it cannot make in time.
 */

/** Device pixels Chromium can put in one frame, per side (and the most a WebP can hold). */
export const FRAME_LIMIT_PX = 16_383;
/** Pixels a JPEG can hold per side (libjpeg-turbo, used by libvips, stops at 65 500): a jpeg's budget stops there. */
export const JPEG_LIMIT_PX = 65_500;
/** Tallest tile, in device pixels: well inside one frame. */
export const TILE_HEIGHT_PX = 8_000;
/**
 * Most device pixels in one tile: a very wide region gets shorter tiles, so that no single
 * screenshot asks Chromium for more than a 1920 × 8 000 frame (a 16 383 × 16 383 frame stalls the
 * shared browser for minutes).
 */
export const TILE_MAX_PIXELS = 1920 * TILE_HEIGHT_PX;
/**
 * Most device pixels captured in one frame without tiling: today's single screenshot of a desktop
 * page up to 16 383 px tall stays one screenshot (no slower than before tiling existed).
 */
export const SINGLE_FRAME_MAX_PIXELS = 1920 * FRAME_LIMIT_PX;

export interface FullPageBudget {
  /** Tallest output, device pixels (FULL_PAGE_MAX_HEIGHT_PX). */
  maxHeightPx: number;
  /** Largest output, device pixels, width × height (FULL_PAGE_MAX_PIXELS). */
  maxPixels: number;
}

export const DEFAULT_FULL_PAGE_BUDGET: FullPageBudget = { maxHeightPx: 100_000, maxPixels: 1920 * 100_000 };

export interface Tile {
  /** CSS px from the top of the region. */
  y: number;
  /** CSS px. */
  height: number;
}

export interface FullPagePlan {
  /** CSS px captured. */
  width: number;
  height: number;
  /** Whether the region was cut (to one frame's width or to the budget). */
  truncated: boolean;
  tiles: Tile[];
}

/** A plan for a region of `size` CSS px rendered at `scale` device px per CSS px. */
export function planFullPage(
  size: { width: number; height: number },
  scale: number,
  budget: FullPageBudget = DEFAULT_FULL_PAGE_BUDGET,
): FullPagePlan {
  const maxWidth = Math.max(1, Math.floor(FRAME_LIMIT_PX / scale));
  const width = Math.max(1, Math.min(Math.ceil(size.width), maxWidth));
  const byPixels = Math.floor(budget.maxPixels / (width * scale * scale));
  const maxHeight = Math.max(1, Math.min(Math.floor(budget.maxHeightPx / scale), byPixels));
  const height = Math.max(1, Math.min(Math.ceil(size.height), maxHeight));
  const truncated = Math.ceil(size.width) > width || Math.ceil(size.height) > height;
  // Whole CSS px per tile so tiles meet exactly on device pixels at integer scales.
  const tileDevicePx = Math.min(TILE_HEIGHT_PX, Math.floor(TILE_MAX_PIXELS / (width * scale)));
  const tileCss = Math.max(1, Math.floor(tileDevicePx / scale));
  const tiles: Tile[] = [];
  for (let y = 0; y < height; y += tileCss) tiles.push({ y, height: Math.min(tileCss, height - y) });
  return { width, height, truncated, tiles };
}

/** Whether the plan can be one ordinary screenshot: uncut, inside one frame and not too many pixels. */
export function fitsOneFrame(plan: FullPagePlan, scale: number): boolean {
  const width = plan.width * scale;
  const height = plan.height * scale;
  return !plan.truncated && width <= FRAME_LIMIT_PX && height <= FRAME_LIMIT_PX && width * height <= SINGLE_FRAME_MAX_PIXELS;
}

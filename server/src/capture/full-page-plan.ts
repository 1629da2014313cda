/**
 * Plans a full-page capture as horizontal tiles, each small enough for one Chromium frame
 * (16 383 device px per side), and cuts the page at a budget so that no capture can ask the
 * browser for a frame it cannot make in time.
 */

/** Device pixels Chromium can put in one frame, per side. */
export const FRAME_LIMIT_PX = 16_383;
/** Tallest tile, in device pixels: well inside one frame. */
export const TILE_HEIGHT_PX = 8_000;

export interface FullPageBudget {
  /** Tallest output, device pixels. */
  maxHeightPx: number;
  /** Largest output, device pixels (width × height). */
  maxPixels: number;
}

export const DEFAULT_FULL_PAGE_BUDGET: FullPageBudget = { maxHeightPx: 100_000, maxPixels: 1920 * 100_000 };

export interface Tile {
  /** CSS px from the top of the document. */
  y: number;
  /** CSS px. */
  height: number;
}

export interface FullPagePlan {
  /** CSS px captured. */
  width: number;
  height: number;
  /** Whether the document was cut to the budget. */
  truncated: boolean;
  tiles: Tile[];
}

/** A plan for a document of `size` CSS px rendered at `scale` device px per CSS px. */
export function planFullPage(size: { width: number; height: number }, scale: number, budget: FullPageBudget = DEFAULT_FULL_PAGE_BUDGET): FullPagePlan {
  const maxWidth = Math.floor(FRAME_LIMIT_PX / scale);
  const width = Math.max(1, Math.min(Math.ceil(size.width), maxWidth));
  const byPixels = Math.floor(budget.maxPixels / (width * scale * scale));
  const maxHeight = Math.max(1, Math.min(Math.floor(budget.maxHeightPx / scale), byPixels));
  const height = Math.max(1, Math.min(Math.ceil(size.height), maxHeight));
  const truncated = Math.ceil(size.width) > width || Math.ceil(size.height) > height;
  // Whole CSS px per tile so tiles meet exactly on device pixels at integer scales.
  const tileCss = Math.max(1, Math.floor(TILE_HEIGHT_PX / scale));
  const tiles: Tile[] = [];
  for (let y = 0; y < height; y += tileCss) tiles.push({ y, height: Math.min(tileCss, height - y) });
  return { width, height, truncated, tiles };
}

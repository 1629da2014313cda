import { describe, expect, it } from 'vitest';
import {
  FRAME_LIMIT_PX,
  TILE_HEIGHT_PX,
  TILE_MAX_PIXELS,
  fitsOneFrame,
  planFullPage,
} from '../../server/src/capture/output/full-page-plan.js';

describe('full-page tile plan', () => {
  it('covers the whole document with contiguous tiles inside one frame each', () => {
    const plan = planFullPage({ width: 400, height: 30_000 }, 3);
    expect(plan.truncated).toBe(false);
    expect(plan.height).toBe(30_000);
    let y = 0;
    for (const tile of plan.tiles) {
      expect(tile.y).toBe(y);
      expect(tile.height * 3).toBeLessThanOrEqual(TILE_HEIGHT_PX);
      y += tile.height;
    }
    expect(y).toBe(30_000);
  });

  it('cuts at the height budget and at the pixel budget, and says so', () => {
    const tall = planFullPage({ width: 1000, height: 200_000 }, 1, { maxHeightPx: 100_000, maxPixels: 1e12 });
    expect([tall.height, tall.truncated]).toEqual([100_000, true]);
    const scaled = planFullPage({ width: 1000, height: 200_000 }, 2, { maxHeightPx: 100_000, maxPixels: 1e12 });
    expect(scaled.height).toBe(50_000);
    const huge = planFullPage({ width: 200_000, height: 200_000 }, 1, { maxHeightPx: 100_000, maxPixels: 1920 * 100_000 });
    expect(huge.width).toBe(FRAME_LIMIT_PX);
    expect(huge.width * huge.height).toBeLessThanOrEqual(1920 * 100_000);
    expect(huge.truncated).toBe(true);
  });

  it('follows a lowered budget: height, then pixels, at every scale', () => {
    const budget = { maxHeightPx: 20_000, maxPixels: 1e12 };
    const desktop = planFullPage({ width: 800, height: 50_000 }, 1, budget);
    expect([desktop.width, desktop.height, desktop.truncated]).toEqual([800, 20_000, true]);
    expect(desktop.tiles.reduce((sum, tile) => sum + tile.height, 0)).toBe(20_000);
    // Scale 3: 20 000 device px are 6 666 CSS px.
    const mobile = planFullPage({ width: 393, height: 50_000 }, 3, budget);
    expect([mobile.height, mobile.truncated]).toEqual([6_666, true]);
    // Just inside the budget: whole, not truncated.
    expect(planFullPage({ width: 800, height: 20_000 }, 1, budget).truncated).toBe(false);
    // The pixel budget cuts a wide page shorter than the height budget would.
    const wide = planFullPage({ width: 4_000, height: 50_000 }, 1, { maxHeightPx: 20_000, maxPixels: 4_000 * 5_000 });
    expect([wide.width, wide.height, wide.truncated]).toEqual([4_000, 5_000, true]);
  });

  it('cuts a region wider than one frame and keeps every tile within the tile pixel limit', () => {
    const plan = planFullPage({ width: 200_000, height: 200_000 }, 1);
    expect(plan.width).toBe(FRAME_LIMIT_PX);
    expect(plan.truncated).toBe(true);
    for (const tile of plan.tiles) expect(tile.height * plan.width).toBeLessThanOrEqual(TILE_MAX_PIXELS);
    expect(plan.tiles.reduce((sum, tile) => sum + tile.height, 0)).toBe(plan.height);
    // Only wide: cut at the frame's width, full height, and said.
    const wide = planFullPage({ width: 20_000, height: 500 }, 1);
    expect([wide.width, wide.height, wide.truncated]).toEqual([FRAME_LIMIT_PX, 500, true]);
  });

  it('keeps one ordinary screenshot for what fits one frame and tiles the rest', () => {
    expect(fitsOneFrame(planFullPage({ width: 1280, height: 16_000 }, 1), 1)).toBe(true);
    expect(fitsOneFrame(planFullPage({ width: 1280, height: 17_000 }, 1), 1)).toBe(false);
    expect(fitsOneFrame(planFullPage({ width: 393, height: 6_000 }, 3), 3)).toBe(false);
    // Inside one frame but cut by a lowered budget: tiled, so the cut is exact.
    expect(fitsOneFrame(planFullPage({ width: 800, height: 12_000 }, 1, { maxHeightPx: 10_000, maxPixels: 1e12 }), 1)).toBe(false);
    // Inside one frame but too many pixels for one screenshot.
    expect(fitsOneFrame(planFullPage({ width: 10_000, height: 10_000 }, 1), 1)).toBe(false);
  });
});

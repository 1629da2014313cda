import { describe, expect, it } from 'vitest';
import { FRAME_LIMIT_PX, TILE_HEIGHT_PX, planFullPage } from '../../server/src/capture/full-page-plan.js';

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
});

/** Checks of what a capture returned: resources fetched, lazy images painted, PNG sizes, error bodies. */
import { PNG } from 'pngjs';
import { VIEWPORT } from './baselines.js';
import type { FixtureServer } from './fixture-server.js';
import { LAZY_COUNT, lazyColour, REALISTIC_RESOURCES } from './make-fixtures.js';
import type { ResourceCheck } from './results.js';
import type { HttpResult } from './service.js';
import { colourClose, pngSize } from './stats.js';

export function resourceCheck(fixtures: FixtureServer, captures: number): ResourceCheck {
  const missing = REALISTIC_RESOURCES.filter((p) => (fixtures.counts.get(`/${p}`) ?? 0) < captures);
  return { captures, fetchedEveryCapture: REALISTIC_RESOURCES.length - missing.length, resources: REALISTIC_RESOURCES.length, missing };
}

/** How many of the lazy images' colours appear as a run of ≥ 100 px in the PNG's middle column. */
export function paintedLazyImages(bytes: Uint8Array): number {
  const png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const x = Math.floor(png.width / 2);
  const found = new Set<number>();
  const colours = Array.from({ length: LAZY_COUNT }, (_, i) => lazyColour(i + 1));
  let current = -1;
  let run = 0;
  for (let y = 0; y < png.height; y++) {
    const i = (y * png.width + x) * 4;
    const px = { r: png.data[i] ?? 0, g: png.data[i + 1] ?? 0, b: png.data[i + 2] ?? 0 };
    const match =
      current >= 0 && colourClose(px, colours[current] ?? { r: -99, g: -99, b: -99 }, 6)
        ? current
        : colours.findIndex((c) => colourClose(px, c, 6));
    if (match >= 0 && match === current) run++;
    else {
      current = match;
      run = match >= 0 ? 1 : 0;
    }
    if (current >= 0 && run >= 100) found.add(current);
  }
  return found.size;
}

export function statusKey(r: HttpResult): string {
  return r.status === 0 ? `network: ${r.error ?? 'error'}`.slice(0, 80) : String(r.status);
}

export function isGoodPng(r: HttpResult, fullPage: boolean): boolean {
  if (r.status !== 200) return false;
  const size = pngSize(r.body);
  if (!size || size.width !== VIEWPORT.width) return false;
  return fullPage ? size.height >= VIEWPORT.height : size.height === VIEWPORT.height;
}

export function bodySnippet(r: HttpResult): string {
  return `${r.status} ${r.contentType} ${Buffer.from(r.body.subarray(0, 300)).toString('utf8')}${r.error ? ` ${r.error}` : ''}`;
}

/**
 * A reference figure beside the raw floor: the same one-page puppeteer loop on the full Chromium
 * (/usr/bin/chromium), the browser a raw puppeteer script drives by default. The raw floor itself
 * is the binary the service renders with (the headless shell, chromium-launch.ts), so that no ratio
 * takes credit for the lighter binary; this row shows how much slower the full browser is.
 */
import { existsSync } from 'node:fs';
import { FULL_CHROMIUM } from '../../server/src/chromium-binaries.js';
import { launchRaw, rawCapture } from './baselines.js';
import { treeCpuSeconds } from './proc-cpu.js';
import { nowMs, percentile, round, summarize, type LatencySummary } from './stats.js';

export type FullBrowserFloor = LatencySummary & { cpuSecondsPerCapture: number; pngBytesP50: number };

/** p50 and CPU of `n` sequential goto + default-PNG captures on the full browser; undefined when it is not installed. */
export async function measureFullBrowserFloor(url: string, n: number, warmup: number): Promise<FullBrowserFloor | undefined> {
  if (!existsSync(FULL_CHROMIUM)) return undefined;
  const browser = await launchRaw([], FULL_CHROMIUM);
  try {
    for (let i = 0; i < warmup; i++) await rawCapture(browser.page, url);
    const cpuAt = () => (browser.pid !== undefined ? treeCpuSeconds(browser.pid) : Number.NaN);
    const cpuStart = cpuAt();
    const samples: number[] = [];
    const bytes: number[] = [];
    const start = nowMs();
    for (let i = 0; i < n; i++) {
      const r = await rawCapture(browser.page, url);
      samples.push(r.ms);
      bytes.push(r.png.length);
    }
    const wall = nowMs() - start;
    return { ...summarize(samples, wall), cpuSecondsPerCapture: round((cpuAt() - cpuStart) / n, 3), pngBytesP50: percentile(bytes, 50) };
  } finally {
    await browser.close();
  }
}

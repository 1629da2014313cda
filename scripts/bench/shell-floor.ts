/**
 * A reference figure beside the raw floor: the same one-page puppeteer loop on Debian's
 * chromium-headless-shell, the binary the service renders with (chromium-launch.ts). The raw floor
 * itself stays the full browser a raw puppeteer script drives; this row shows how much of the
 * service's lead comes from the lighter binary, so that no ratio hides it.
 */
import { existsSync } from 'node:fs';
import { HEADLESS_SHELL } from '../../server/src/capture/chromium-launch.js';
import { launchRaw, rawCapture } from './baselines.js';
import { treeCpuSeconds } from './proc-cpu.js';
import { nowMs, percentile, round, summarize, type LatencySummary } from './stats.js';

export type ShellFloor = LatencySummary & { cpuSecondsPerCapture: number; pngBytesP50: number };

/** p50 and CPU of `n` sequential goto + default-PNG captures on the headless shell; undefined when it is not installed. */
export async function measureShellFloor(url: string, n: number, warmup: number): Promise<ShellFloor | undefined> {
  if (!existsSync(HEADLESS_SHELL)) return undefined;
  const browser = await launchRaw([], HEADLESS_SHELL);
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

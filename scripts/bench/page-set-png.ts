/**
 * The PNG encoder alone on the page set (`npx tsx scripts/bench/page-set-png.ts`; docs/performance.md,
 * "PNG size"): each page's fast PNG and Chromium's default PNG from one kept page on the binary the
 * service runs, then the service's re-encoding of the fast one (server/src/capture/output/png-encoder.ts),
 * timed alone BENCH_PNG_N times (15): its bytes ÷ Chromium's, its median time, the fast file's
 * ratio and what the encoder read from its rows, and a check that its pixels are Chromium's.
 * The page set's own run (page-set.ts) measures the same through the service, with the rest of a capture.
 *
 * Environment: BENCH_PNG_N, BENCH_SET_PAGES=plain,wiki for a subset.
 */
import sharp from 'sharp';
import { HEADLESS_SHELL } from '../../server/src/chromium-binaries.js';
import { compactPng, lookAtPng, readsRows } from '../../server/src/capture/output/png-encoder.js';
import { pngCompressionRatio } from '../../server/src/capture/output/png-header.js';
import { launchRaw, VIEWPORT } from './baselines.js';
import { PAGE_SET } from './page-set.js';
import { servePageSetFixtures } from './page-set-fixtures.js';
import { PAGE_SET_SETTINGS, PAGE_SET_TARGETS } from './settings.js';
import { nowMs, percentile, round } from './stats.js';
import { runWhenInvokedDirectly } from './standalone.js';

const N = Number(process.env.BENCH_PNG_N ?? 15);

/** RGB as libvips decodes it (a grey file spread to three channels). */
const rgb = (png: Uint8Array) => sharp(png).toColourspace('srgb').removeAlpha().raw().toBuffer();

export async function measurePngEncoder(): Promise<{ markdown: string; failures: number }> {
  const pages = PAGE_SET_SETTINGS.pages.length ? PAGE_SET.filter((p) => PAGE_SET_SETTINGS.pages.includes(p.name)) : PAGE_SET;
  const fixtures = await servePageSetFixtures();
  const browser = await launchRaw([], HEADLESS_SHELL);
  const rows: string[] = [];
  let failures = 0;
  try {
    for (const page of pages) {
      await browser.page.setViewport(VIEWPORT);
      await browser.page.goto(`${fixtures.origin}${page.path}`, { waitUntil: 'load', timeout: 60_000 });
      const fast = Buffer.from(await browser.page.screenshot({ type: 'png', fullPage: page.fullPage, optimizeForSpeed: true }));
      const chromium = Buffer.from(await browser.page.screenshot({ type: 'png', fullPage: page.fullPage }));
      const times: number[] = [];
      let ours: Buffer = fast;
      for (let i = 0; i < N; i++) {
        const started = nowMs();
        ours = await compactPng(fast);
        times.push(nowMs() - started);
      }
      const same = (await rgb(ours)).equals(await rgb(chromium));
      const ratio = ours.length / chromium.length;
      const ok = same && ratio <= PAGE_SET_TARGETS.pngPageRatioMax;
      if (!ok) failures++;
      const look = readsRows(fast) ? await lookAtPng(fast) : undefined;
      const read = !look
        ? 'not read'
        : look.grey
          ? 'grey'
          : look.colours === undefined
            ? '—'
            : look.colours > 4096
              ? '> 4 096 colours'
              : `${look.colours} colours`;
      rows.push(
        `| ${page.name} | ${chromium.length} | ${ours.length} | ${round(ratio, 3)}×${ok ? '' : ' ✗'} | ${round(percentile(times, 50))} | ${round(pngCompressionRatio(fast) ?? 0)}:1 | ${read} | ${same ? 'yes' : 'NO'} |`,
      );
    }
  } finally {
    await browser.close();
    await fixtures.close();
  }
  return {
    markdown: [
      `PNG encoder alone, ${N} runs a page, on ${browser.version}, ${VIEWPORT.width}×${VIEWPORT.height}; ✗: over ${PAGE_SET_TARGETS.pngPageRatioMax}× or other pixels.`,
      '',
      "| page | Chromium's default B | ours B | ratio | encode p50 ms | fast PNG ratio | rows read | same pixels |",
      '|---|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n'),
    failures,
  };
}

runWhenInvokedDirectly(import.meta.url, measurePngEncoder);

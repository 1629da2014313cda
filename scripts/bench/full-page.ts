/**
 * What full-page captures of tall pages cost (`npx tsx scripts/bench/full-page.ts`; `npm run bench`
 * runs it too, measureFullPage).
 *
 * Starts the service (the real CLI, as scripts/bench.ts does) and a fixture server on loopback,
 * then captures, over HTTP and one at a time, desktop pages (1920×1080, scale 1) of 16 000, 30 000
 * and 100 000 CSS px of text sections and coloured boxes with fullPage=true, in png and jpeg,
 * the cases taking turns so that a drift of the machine's load spreads over all of them. For each
 * case: the median time of the whole request, the file size, the image size, X-Capture-Truncated,
 * and the peak PSS of the service's process tree (Node and Chromium) sampled every 250 ms.
 *
 * Targets: the 100 000 px capture takes at most 4× the 30 000 px one (time grows no
 * faster than the page), and peak PSS stays under 1.5 GiB. The 16 000 px page fits one frame and
 * takes the single-screenshot path it always took (full-page-plan.ts, singleShot).
 *
 * A jpeg holds at most 65 500 px per side (libjpeg): the 100 000 px jpeg is cut there (truncated).
 *
 * Environment: BENCH_FULLPAGE_N=2 captures per case (after one warm-up capture of the smallest page).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { FixtureServer } from '../../tests/helpers/fixture-server.js';
import { REPO_ROOT } from './make-fixtures.js';
import { PssSampler } from './proc-mem.js';
import { startService, timedGet } from './service.js';
import { percentile, round } from './stats.js';
import { runWhenInvokedDirectly } from './standalone.js';

const N = Number(process.env.BENCH_FULLPAGE_N ?? 2);
if (!Number.isInteger(N) || N < 1 || N > 100)
  throw new Error(`BENCH_FULLPAGE_N must be a whole number from 1 to 100 (got ${process.env.BENCH_FULLPAGE_N})`);
const HEIGHTS = [16_000, 30_000, 100_000] as const;
const FORMATS = ['png', 'jpeg'] as const;
const TARGETS = { timeRatioMax: 4, peakPssMaxKb: 1.5 * 1024 * 1024 };
/**
 * The deadline of this service: long enough for a loaded 2-core machine to finish every case, so
 * that the table shows the real time instead of a 504.
 */
const CAPTURE_TIMEOUT_MS = 120_000;

const SECTION_HEIGHT = 1_000;
const WORDS = 'daguerre captures tall pages in tiles and joins them with libvips while the browser stays free for others'.split(' ');

/** A page of `height` CSS px: sections of a heading, paragraphs and a coloured box, all different. */
export function tallPage(height: number): string {
  const sections: string[] = [];
  for (let i = 0; i < height / SECTION_HEIGHT; i++) {
    const text = (k: number) => Array.from({ length: 90 }, (_, j) => WORDS[(i * 7 + j * 3 + k) % WORDS.length]).join(' ');
    const hue = (i * 47) % 360;
    sections.push(
      `<section style="height:${SECTION_HEIGHT}px;box-sizing:border-box;padding:24px 120px;overflow:hidden;border-top:1px solid #ddd">` +
        `<h2 style="margin:0 0 12px">Section ${i + 1}</h2><p>${text(0)}</p><p>${text(1)}</p>` +
        `<div style="height:320px;margin:16px 0;background:linear-gradient(90deg,hsl(${hue} 70% 55%),hsl(${(hue + 90) % 360} 70% 45%))"></div><p>${text(2)}</p></section>`,
    );
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>tall ${height}</title></head><body style="margin:0;font:16px/1.5 sans-serif;color:#222">${sections.join('')}</body></html>`;
}

interface Case {
  height: number;
  format: (typeof FORMATS)[number];
}

interface CaseResult extends Case {
  ms: number[];
  bytes: number[];
  image: string;
  truncated: string;
  peakPssKb: number;
}

/** Captures every case; returns the Markdown table and the number of failed captures or missed targets. */
export async function measureFullPage(): Promise<{ markdown: string; failures: number }> {
  const fixture = await new FixtureServer().start();
  for (const height of HEIGHTS) fixture.page(`/tall-${height}.html`, tallPage(height));
  const dataDir = await mkdtemp(join(tmpdir(), 'daguerre-bench-fullpage-'));
  const service = await startService({
    repoRoot: REPO_ROOT,
    dataDir,
    credits: 1_000_000,
    env: { CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS) },
  });
  const cases: CaseResult[] = HEIGHTS.flatMap((height) =>
    FORMATS.map((format) => ({ height, format, ms: [], bytes: [], image: '', truncated: '', peakPssKb: 0 })),
  );
  let failures = 0;
  const capture = (c: Case) =>
    timedGet(
      `${service.origin}/capture?${new URLSearchParams({ url: `${fixture.url}/tall-${c.height}.html`, viewportWidth: '1920', viewportHeight: '1080', fullPage: 'true', format: c.format, apiKey: service.apiKey })}`,
      CAPTURE_TIMEOUT_MS + 30_000,
    );
  try {
    console.log(`service ${service.origin}, ${N} captures per case (+1 warm-up), desktop 1920×1080, fullPage=true`);
    await capture({ height: HEIGHTS[0], format: 'png' });
    for (let round_ = 0; round_ < N; round_++) {
      for (const c of cases) {
        const sampler = new PssSampler(service.pid, 250);
        sampler.start();
        const result = await capture(c);
        const peak = sampler.stop();
        c.peakPssKb = Math.max(c.peakPssKb, peak.peakKb);
        if (result.status !== 200) {
          failures++;
          console.error(
            `  ${c.height} px ${c.format}: HTTP ${result.status} ${result.error ?? new TextDecoder().decode(result.body).slice(0, 200)}`,
          );
          continue;
        }
        const meta = await sharp(Buffer.from(result.body), { limitInputPixels: false }).metadata();
        c.ms.push(result.ms);
        c.bytes.push(result.body.length);
        c.image = `${meta.width}×${meta.height}`;
        c.truncated = String((meta.height ?? 0) < c.height);
        console.log(
          `  ${c.height} px ${c.format}: ${round(result.ms, 0)} ms, ${result.body.length} B, ${c.image}, peak PSS ${round(peak.peakKb / 1024, 0)} MiB`,
        );
      }
    }
  } finally {
    await service.stop();
    await fixture.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  const mib = (kb: number) => `${round(kb / 1024, 0)} MiB`;
  const rows = cases.map(
    (c) =>
      `| ${c.height.toLocaleString('en')} | ${c.format} | ${c.ms.length} | ${round(percentile(c.ms, 50), 0)} | ${percentile(c.bytes, 50)} | ${c.image} | ${c.truncated} | ${mib(c.peakPssKb)} |`,
  );
  const targets: string[] = [];
  for (const format of FORMATS) {
    const p50 = (height: number) => percentile(cases.find((c) => c.height === height && c.format === format)!.ms, 50);
    const ratio = p50(100_000) / p50(30_000);
    const pass = ratio <= TARGETS.timeRatioMax;
    if (!pass) failures++;
    targets.push(
      `| ${format}: time of 100 000 px ÷ 30 000 px | ≤ ${TARGETS.timeRatioMax} | ${round(ratio, 2)} | ${pass ? 'PASS' : 'FAIL'} |`,
    );
  }
  const peak = Math.max(...cases.map((c) => c.peakPssKb));
  const pssPass = peak < TARGETS.peakPssMaxKb;
  if (!pssPass) failures++;
  targets.push(`| peak PSS of the service tree | < ${mib(TARGETS.peakPssMaxKb)} | ${mib(peak)} | ${pssPass ? 'PASS' : 'FAIL'} |`);
  const markdown = [
    '| page px | format | n | p50 ms | file bytes p50 | image | cut | peak PSS |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    '| target | wanted | measured | status |',
    '|---|---|---|---|',
    ...targets,
  ].join('\n');
  return { markdown, failures };
}

runWhenInvokedDirectly(import.meta.url, measureFullPage);

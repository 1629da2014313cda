/**
 * Daguerre benchmark (`npm run bench`). Measures, in one run and on the same fixture pages
 * (viewport 1920×1080, PNG):
 *   - the service over HTTP: sequential latency, throughput at concurrency 1/2/4, a lazy-image
 *     full-page capture, memory (PSS of the whole process tree);
 *   - baseline A, the "raw floor": one puppeteer page kept open on the binary the service runs, goto + screenshot;
 *   - baseline B, capture-website (a browser per capture);
 * and prints a Markdown table against the targets. Also writes .bench/results.md and
 * .bench/results.json (plus sample PNGs).
 *
 * Environment:
 *   BENCH_N=30                  sequential captures for the latency figures
 *   BENCH_THROUGHPUT_REQUESTS=24  requests per concurrency level
 *   BENCH_LAZY_N=10             lazy-page captures (service and raw)
 *   BENCH_CW_N=8                capture-website captures
 *   BENCH_LONG=500              captures before the second memory figure (first one after 50)
 *   BENCH_QUICK=1               skip the long memory run
 *   BENCH_BASELINES_ONLY=1      measure the baselines only (no service)
 *   BENCH_NO_FILTERS=1          skip the removeAds/removeCookieBanners section (BENCH_FILTERS_N=10 per page and options)
 *   BENCH_NO_FULLPAGE=1         skip the full-page section: 16 000, 30 000, 100 000 px pages in png and jpeg
 *                               (BENCH_FULLPAGE_N=2 per case; alone: npx tsx scripts/bench/full-page.ts)
 *   BENCH_NO_ORGS=1             skip the sandbox / four-organizations section (BENCH_ORGS_N=30 sequential captures)
 *   BENCH_NO_SET=1              skip the page set: the service against a kept page on the headless shell, page by page
 *                               (BENCH_SET_N=15 pairs per page, BENCH_SET_PAGES=text,photo; alone: npm run bench:pages)
 *   BENCH_SERVICE_BIN=path      the service's CLI entry point (default server/bin/daguerre.js)
 *
 * Exit status: 0 when every target passed (or, with BENCH_BASELINES_ONLY, when the baselines ran),
 * 1 otherwise.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { captureWebsiteOnce, launchRaw, rawCapture, rawScrollCapture, VIEWPORT, type RawBrowser } from './bench/baselines.js';
import { paintedLazyImages, resourceCheck } from './bench/checks.js';
import { measureContentFilters } from './bench/content-filters.js';
import { measureDeadHosts } from './bench/dead-hosts.js';
import { lazyImagesRequested, startFixtureServer, type FixtureServer } from './bench/fixture-server.js';
import { measureFullPage } from './bench/full-page.js';
import { buildFixtures, LAZY_COUNT, REALISTIC_RESOURCES } from './bench/make-fixtures.js';
import { measureOrganizations } from './bench/organizations.js';
import { measurePageSet } from './bench/page-set.js';
import { treeCpuSeconds } from './bench/proc-cpu.js';
import { PssSampler } from './bench/proc-mem.js';
import { buildRows, markdown } from './bench/report.js';
import type { Results } from './bench/results.js';
import { cleanups, log, runCleanups } from './bench/run-log.js';
import { measureService } from './bench/service-phase.js';
import { flagEnv, OUT_DIR, PAGE_SET_SETTINGS, SETTINGS, TARGETS } from './bench/settings.js';
import { measureFullBrowserFloor } from './bench/full-browser-floor.js';
import { nowMs, percentile, pngSize, round, summarize } from './bench/stats.js';

// ---------------------------------------------------------------------------------------------
// Phases

async function measureRawFloor(fixtures: FixtureServer, results: Results, realisticUrl: string, lazyUrl: string): Promise<void> {
  const raw: NonNullable<Results['rawFloor']> = {};
  results.rawFloor = raw;
  let browser: RawBrowser | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  try {
    log('baseline A (raw floor): launching Chromium');
    browser = await launchRaw();
    const opened = browser;
    cleanup = () => opened.close();
    cleanups.push(cleanup);
    results.meta.chromium = browser.version;

    for (let i = 0; i < SETTINGS.warmup; i++) await rawCapture(browser.page, realisticUrl);
    fixtures.resetCounts();
    const sampler = browser.pid !== undefined ? new PssSampler(browser.pid) : undefined;
    sampler?.start();
    const samples: number[] = [];
    const bytes: number[] = [];
    let firstPng: Uint8Array | undefined;
    // The browser's processes only: this process also runs the fixture server, whose work the
    // service's figure does not include either (that one counts the service's Node process too).
    const cpuAt = () => (browser?.pid !== undefined ? treeCpuSeconds(browser.pid) : Number.NaN);
    const cpuStart = cpuAt();
    const start = nowMs();
    for (let i = 0; i < SETTINGS.n; i++) {
      const r = await rawCapture(browser.page, realisticUrl);
      samples.push(r.ms);
      bytes.push(r.png.length);
      firstPng ??= r.png;
    }
    const wall = nowMs() - start;
    const cpuSecondsPerCapture = round((cpuAt() - cpuStart) / SETTINGS.n, 3);
    const peak = sampler?.stop();
    raw.realistic = {
      ...summarize(samples, wall),
      resources: resourceCheck(fixtures, SETTINGS.n),
      peakPssKb: peak?.peakKb ?? Number.NaN,
      pngBytesP50: percentile(bytes, 50),
      cpuSecondsPerCapture,
    };
    if (firstPng) await writeFile(join(OUT_DIR, 'realistic-raw.png'), firstPng);
    log(
      `baseline A realistic: p50 ${raw.realistic.p50Ms} ms, p95 ${raw.realistic.p95Ms} ms, ${raw.realistic.throughputPerS}/s, PNG ${raw.realistic.pngBytesP50} B, ${cpuSecondsPerCapture} CPU-s/capture`,
    );

    log('baseline A: lazy page, scroll then full-page screenshot');
    await rawScrollCapture(browser.page, lazyUrl);
    const lazySamples: number[] = [];
    const requested: number[] = [];
    const pngs: Uint8Array[] = [];
    const lazyStart = nowMs();
    let lazyWall = 0;
    for (let i = 0; i < SETTINGS.lazyN; i++) {
      fixtures.resetCounts();
      const r = await rawScrollCapture(browser.page, lazyUrl);
      lazySamples.push(r.ms);
      requested.push(lazyImagesRequested(fixtures.counts));
      pngs.push(r.png);
    }
    lazyWall = nowMs() - lazyStart;
    const painted = pngs.map(paintedLazyImages);
    const heights = pngs.map((p) => pngSize(p)?.height ?? 0);
    if (pngs[0]) await writeFile(join(OUT_DIR, 'lazy-raw.png'), pngs[0]);
    raw.lazy = {
      ...summarize(lazySamples, lazyWall),
      requestedPerCapture: requested,
      paintedPerCapture: painted,
      pngHeights: heights,
      allLoaded: requested.every((n) => n === LAZY_COUNT) && painted.every((n) => n === LAZY_COUNT),
    };
    log(`baseline A lazy: p50 ${raw.lazy.p50Ms} ms; requested ${requested.join(',')}; painted ${painted.join(',')}`);
  } catch (e) {
    raw.error = e instanceof Error ? e.message : String(e);
    log(`baseline A failed: ${raw.error}`);
  } finally {
    if (cleanup) {
      const i = cleanups.indexOf(cleanup);
      if (i >= 0) cleanups.splice(i, 1);
    }
    await browser?.close().catch(() => undefined);
  }
}

async function measureCaptureWebsite(fixtures: FixtureServer, results: Results, realisticUrl: string): Promise<void> {
  try {
    log(`baseline B (capture-website): 1 warm-up + ${SETTINGS.captureWebsiteN} captures, a browser each`);
    await captureWebsiteOnce(realisticUrl);
    fixtures.resetCounts();
    const samples: number[] = [];
    let first: Uint8Array | undefined;
    const start = nowMs();
    for (let i = 0; i < SETTINGS.captureWebsiteN; i++) {
      const r = await captureWebsiteOnce(realisticUrl);
      samples.push(r.ms);
      first ??= r.png;
    }
    const wall = nowMs() - start;
    const size = first ? pngSize(first) : undefined;
    if (!size || size.width !== VIEWPORT.width || size.height !== VIEWPORT.height)
      throw new Error(`capture-website returned ${JSON.stringify(size)}, not ${VIEWPORT.width}×${VIEWPORT.height}`);
    if (first) await writeFile(join(OUT_DIR, 'realistic-capture-website.png'), first);
    const cw = { ...summarize(samples, wall), resources: resourceCheck(fixtures, SETTINGS.captureWebsiteN) };
    results.captureWebsite = cw;
    log(`baseline B: p50 ${cw.p50Ms} ms, p95 ${cw.p95Ms} ms`);
  } catch (e) {
    results.captureWebsite = { error: e instanceof Error ? e.message : String(e) };
    log(`baseline B failed: ${results.captureWebsite.error}`);
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  await mkdir(OUT_DIR, { recursive: true });
  const results: Results = {
    meta: {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      totalMemMiB: Math.round(totalmem() / 1024 / 1024),
      loadAvgStart: round(loadavg()[0] ?? Number.NaN, 2),
      settings: SETTINGS,
      targets: TARGETS,
      notes: [
        'Latencies are wall-clock per capture: for the service the whole HTTP request (queueing included); for the raw floor page.goto(load) + page.screenshot on one page kept open.',
        'The fixture server sends Cache-Control: no-store, so every capture fetches the page and all its resources again.',
        'capture-website runs with scaleFactor 1 (its default is 2) so that every contender renders 1920×1080 pixels; it keeps its own networkidle2 wait.',
        `PSS: sum of the Pss line of /proc/<pid>/smaps_rollup over the service's Node process and all its descendants; peak sampled every second during the concurrency-4 phase; the memory run starts after the other service phases.`,
        "CPU-seconds per capture: user + system time from /proc of the service's Node process and all its descendants (Chromium), or of the raw floor's Chromium alone, over the run ÷ captures.",
        'Lazy images: "requested" counts /img/lazy-N.png requests seen by the fixture server during the capture; "painted" finds each image\'s colour in the PNG\'s middle column.',
      ],
    },
    rows: [],
  };

  const fx = await buildFixtures(false);
  const realisticTransferBytes = fx.files.filter((f) => REALISTIC_RESOURCES.includes(f.path)).reduce((s, f) => s + f.bytes, 0);
  results.fixtures = { realisticTransferBytes, files: fx.files };
  log(
    `fixtures ${fx.written ? 'generated' : 'present'}: realistic page ${(realisticTransferBytes / 1024).toFixed(0)} KiB in ${REALISTIC_RESOURCES.length} files`,
  );

  const fixtures = await startFixtureServer();
  cleanups.push(() => fixtures.close());
  results.meta.fixtureOrigin = fixtures.origin;
  const realisticUrl = `${fixtures.origin}/realistic.html`;
  const lazyUrl = `${fixtures.origin}/lazy.html`;
  log(`fixture server at ${fixtures.origin}`);

  let organizationsMd = '';
  try {
    await measureRawFloor(fixtures, results, realisticUrl, lazyUrl);
    log('reference: the raw floor on the full Chromium');
    const full = await measureFullBrowserFloor(realisticUrl, SETTINGS.n, SETTINGS.warmup).catch((e: unknown) => ({ error: String(e) }));
    if (full && results.rawFloor) results.rawFloor.fullBrowser = full;
    await measureCaptureWebsite(fixtures, results, realisticUrl);
    if (!SETTINGS.baselinesOnly) await measureService(fixtures, results, realisticUrl, lazyUrl);
    // The cost of Chromium's sandbox and of one organization per renderer (docs/security.md), its own service.
    if (!SETTINGS.baselinesOnly && !flagEnv('BENCH_NO_ORGS')) {
      log('organizations: the sandbox and four organizations alternating');
      const floorRate = results.rawFloor?.realistic?.throughputPerS ?? Number.NaN;
      const organizations = await measureOrganizations(realisticUrl, floorRate).catch((e: unknown) => ({
        markdown: `failed: ${String(e)}`,
        failures: 1,
      }));
      organizationsMd = `\n## Chromium sandbox and one organization per renderer\n\n${organizations.markdown}\n`;
      if (organizations.failures > 0) results.meta.notes.push(`organizations: ${organizations.failures} failed captures`);
    }
  } finally {
    await runCleanups();
  }
  // removeAds and removeCookieBanners on pages with and without a consent manager and ads (its own service).
  let filtersMd = '';
  if (!SETTINGS.baselinesOnly && !flagEnv('BENCH_NO_FILTERS')) {
    log('content filters: removeAds and removeCookieBanners overheads');
    const filters = await measureContentFilters().catch((e: unknown) => ({
      markdown: `content filters failed: ${String(e)}`,
      failures: 1,
    }));
    filtersMd = `\n## removeAds and removeCookieBanners (BENCH_FILTERS_N per page and options)\n\n${filters.markdown}\n`;
    if (filters.failures > 0) results.meta.notes.push(`content filters: ${filters.failures} failed captures`);
  }

  // A page naming 20 dead hosts, through the egress proxy and on a plain headless shell (its own service).
  let deadHostsMd = '';
  if (!SETTINGS.baselinesOnly && !flagEnv('BENCH_NO_DEAD_HOSTS')) {
    log('dead hosts: a page with 40 images on 20 names that do not resolve');
    const dead = await measureDeadHosts().catch((e: unknown) => ({ markdown: `dead hosts failed: ${String(e)}`, failures: 1 }));
    deadHostsMd = `\n## Dead third-party hosts (BENCH_DEAD_N captures each)\n\n${dead.markdown}\n`;
    if (dead.failures > 0) results.meta.notes.push(`dead hosts: ${dead.failures} failed captures`);
  }

  // Full-page captures of tall pages: time, file size, peak PSS (its own service).
  let fullPageMd = '';
  let fullPageFailed = false;
  if (!SETTINGS.baselinesOnly && !flagEnv('BENCH_NO_FULLPAGE')) {
    log('full page: 16 000, 30 000 and 100 000 px pages in png and jpeg');
    const fullPage = await measureFullPage().catch((e: unknown) => ({ markdown: `full-page section failed: ${String(e)}`, failures: 1 }));
    fullPageMd = `\n## Full-page captures of tall pages (BENCH_FULLPAGE_N per case)\n\n${fullPage.markdown}\n`;
    fullPageFailed = fullPage.failures > 0;
  }

  // The service against the floor of the binary it runs, page by page (docs/performance.md; its own service).
  let pageSetMd = '';
  let pageSetFailed = false;
  if (!SETTINGS.baselinesOnly && !PAGE_SET_SETTINGS.skip) {
    log('page set: the service against a kept page on the headless shell, page by page');
    const pageSet = await measurePageSet().catch((e: unknown) => ({
      markdown: `page set failed: ${String(e)}`,
      failures: 1,
      result: { error: String(e) },
    }));
    results.pageSet = pageSet.result;
    pageSetMd = `\n## Page set: the service against the floor of the binary it runs\n\n${pageSet.markdown}\n`;
    pageSetFailed = pageSet.failures > 0;
  }

  results.meta.loadAvgEnd = round(loadavg()[0] ?? Number.NaN, 2);
  results.rows = buildRows(results);
  const md = markdown(results) + organizationsMd + filtersMd + deadHostsMd + fullPageMd + pageSetMd;
  process.stdout.write(`\n${md}\n`);
  await writeFile(join(OUT_DIR, 'results.md'), md);
  await writeFile(join(OUT_DIR, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${join(OUT_DIR, 'results.md')} and results.json`);

  const failed = fullPageFailed || pageSetFailed || results.rows.some((row) => row.status === 'FAIL');
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  async (e: unknown) => {
    log(`fatal: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    await runCleanups();
    process.exitCode = 1;
  },
);

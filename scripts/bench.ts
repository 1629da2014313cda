/**
 * Rendershot benchmark (`npm run bench`). Measures, in one run and on the same fixture pages
 * (viewport 1920×1080, PNG):
 *   - the service over HTTP: sequential latency, throughput at concurrency 1/2/4, a lazy-image
 *     full-page capture, memory (PSS of the whole process tree);
 *   - baseline A, the "raw floor": one puppeteer page kept open, goto + screenshot;
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
 *   BENCH_SERVICE_BIN=path      the service's CLI entry point (default server/bin/rendershot.js)
 *
 * Exit status: 0 when every target passed (or, with BENCH_BASELINES_ONLY, when the baselines ran),
 * 1 otherwise.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { captureWebsiteOnce, launchRaw, rawCapture, rawScrollCapture, VIEWPORT, type RawBrowser } from './bench/baselines.js';
import { lazyImagesRequested, startFixtureServer, type FixtureServer } from './bench/fixture-server.js';
import { buildFixtures, LAZY_COUNT, lazyColour, REALISTIC_RESOURCES, REPO_ROOT } from './bench/make-fixtures.js';
import { measureContentFilters } from './bench/content-filters.js';
import { measureFullPage } from './bench/full-page.js';
import { measureOrganizations } from './bench/organizations.js';
import { measureShellFloor, type ShellFloor } from './bench/shell-floor.js';
import { treeCpuSeconds } from './bench/proc-cpu.js';
import { PssSampler, settledPss, treePss } from './bench/proc-mem.js';
import { DEFAULT_BIN, startService, timedGet, type HttpResult, type ServiceHandle } from './bench/service.js';
import { colourClose, nowMs, percentile, pngSize, round, sleep, summarize, type LatencySummary } from './bench/stats.js';

// ---------------------------------------------------------------------------------------------
// Settings

function intEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max} (got ${raw})`);
  return n;
}
function flagEnv(name: string): boolean {
  const raw = (process.env[name] ?? '').toLowerCase();
  return raw === '1' || raw === 'true' || raw === 'yes';
}

const SETTINGS = {
  n: intEnv('BENCH_N', 30, 1, 10_000),
  warmup: 3,
  throughputRequests: intEnv('BENCH_THROUGHPUT_REQUESTS', 24, 4, 10_000),
  concurrencies: [1, 2, 4] as const,
  lazyN: intEnv('BENCH_LAZY_N', 10, 1, 1_000),
  captureWebsiteN: intEnv('BENCH_CW_N', 8, 1, 100),
  memoryFirst: 50,
  memoryLong: intEnv('BENCH_LONG', 500, 51, 100_000),
  memoryConcurrency: 2,
  quick: flagEnv('BENCH_QUICK'),
  baselinesOnly: flagEnv('BENCH_BASELINES_ONLY'),
  serviceBin: process.env.BENCH_SERVICE_BIN || DEFAULT_BIN,
  credits: 1_000_000,
};

const TARGETS = {
  // Issue #20: the service at the raw floor's speed while its PNGs are as small as Chromium's default ones.
  latencyRatioMax: 1.0,
  pngSizeRatioMax: 1.05,
  captureWebsiteRatioMin: 4,
  lazyRatioMax: 1.5,
  peakPssMaxKb: 1024 * 1024,
  pssDriftMax: 0.15,
};

const OUT_DIR = join(REPO_ROOT, '.bench');

// ---------------------------------------------------------------------------------------------
// Logging and cleanup

const t0 = nowMs();
function log(message: string): void {
  process.stderr.write(`[bench +${((nowMs() - t0) / 1000).toFixed(1)}s] ${message}\n`);
}

const cleanups: (() => Promise<void>)[] = [];
async function runCleanups(): Promise<void> {
  // Bounded: each cleanup is removed before it runs.
  while (cleanups.length > 0) {
    const fn = cleanups.pop();
    if (!fn) break;
    try {
      await fn();
    } catch (e) {
      log(`cleanup failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: cleaning up`);
    void runCleanups().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------
// Result types

interface ResourceCheck {
  captures: number;
  /** Resources of realistic.html fetched at least once per capture / all of them. */
  fetchedEveryCapture: number;
  resources: number;
  missing: string[];
}

interface LazyRun extends LatencySummary {
  /** Per capture: how many of the 40 lazy images the fixture server saw requested. */
  requestedPerCapture: number[];
  /** Per capture: how many of the 40 lazy colours appear in the PNG. */
  paintedPerCapture: number[];
  pngHeights: number[];
  allLoaded: boolean;
}

/** What a capture costs besides time: the file's size and the CPU of the whole process tree. */
interface OutputCost {
  /** Median PNG size. */
  pngBytesP50: number;
  /** CPU-seconds ÷ captures: the service's Node process and its Chromium, or the raw floor's Chromium. */
  cpuSecondsPerCapture: number;
}

interface ThroughputRun {
  cpuSecondsPerCapture?: number;
  concurrency: number;
  requests: number;
  ok: number;
  errors: number;
  statuses: Record<string, number>;
  wallMs: number;
  throughputPerS: number;
  p50Ms: number;
  p95Ms: number;
}

interface Results {
  meta: {
    date: string;
    node: string;
    chromium?: string;
    cpus: number;
    totalMemMiB: number;
    /** 1-minute load average at the start and the end: other work on the machine skews every figure. */
    loadAvgStart: number;
    loadAvgEnd?: number;
    settings: typeof SETTINGS;
    targets: typeof TARGETS;
    fixtureOrigin?: string;
    notes: string[];
  };
  fixtures?: { realisticTransferBytes: number; files: { path: string; bytes: number }[] };
  rawFloor?: {
    realistic?: LatencySummary & { resources: ResourceCheck; peakPssKb: number } & OutputCost;
    lazy?: LazyRun;
    /** Reference: the same loop on the headless shell the service runs (shell-floor.ts). */
    shell?: ShellFloor | { error: string };
    error?: string;
  };
  captureWebsite?: (LatencySummary & { resources: ResourceCheck }) | { error: string };
  service?: {
    keySource?: string;
    idlePssKb?: number;
    latency?: LatencySummary & { errors: number; statuses: Record<string, number>; resources: ResourceCheck } & OutputCost;
    throughput: ThroughputRun[];
    peakPssC4Kb?: number;
    peakPssC4Processes?: number;
    pssSamplesC4?: number;
    lazy?: LazyRun & { errors: number; statuses: Record<string, number> };
    memory?: {
      concurrency: number;
      after50Kb?: number;
      after50Processes?: number;
      afterLongKb?: number;
      afterLongProcesses?: number;
      longCaptures: number;
      errors: number;
      totalServedAtFirst?: number;
      totalServedAtLong?: number;
    };
    stop?: { exitedGracefully: boolean; leftoverProcesses: number };
    error?: string;
    firstErrorBody?: string;
  };
  rows: Row[];
}

interface Row {
  metric: string;
  measured: string;
  target: string;
  status: 'PASS' | 'FAIL' | 'n/a' | 'info';
}

// ---------------------------------------------------------------------------------------------
// Checks

function resourceCheck(fixtures: FixtureServer, captures: number): ResourceCheck {
  const missing = REALISTIC_RESOURCES.filter((p) => (fixtures.counts.get(`/${p}`) ?? 0) < captures);
  return { captures, fetchedEveryCapture: REALISTIC_RESOURCES.length - missing.length, resources: REALISTIC_RESOURCES.length, missing };
}

/** How many of the lazy images' colours appear as a run of ≥ 100 px in the PNG's middle column. */
function paintedLazyImages(bytes: Uint8Array): number {
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

function statusKey(r: HttpResult): string {
  return r.status === 0 ? `network: ${r.error ?? 'error'}`.slice(0, 80) : String(r.status);
}

function isGoodPng(r: HttpResult, fullPage: boolean): boolean {
  if (r.status !== 200) return false;
  const size = pngSize(r.body);
  if (!size || size.width !== VIEWPORT.width) return false;
  return fullPage ? size.height >= VIEWPORT.height : size.height === VIEWPORT.height;
}

function bodySnippet(r: HttpResult): string {
  return `${r.status} ${r.contentType} ${Buffer.from(r.body.subarray(0, 300)).toString('utf8')}${r.error ? ` ${r.error}` : ''}`;
}

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

async function measureService(fixtures: FixtureServer, results: Results, realisticUrl: string, lazyUrl: string): Promise<void> {
  const svcResults: NonNullable<Results['service']> = { throughput: [] };
  results.service = svcResults;
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-service-'));
  let svc: ServiceHandle | undefined;
  let served = 0;
  const stopService = async () => {
    if (!svc) return;
    const handle = svc;
    svc = undefined;
    log('stopping the service');
    const { exitedGracefully, leftovers } = await handle.stop();
    svcResults.stop = { exitedGracefully, leftoverProcesses: leftovers.length };
    if (!exitedGracefully) log('the service did not exit within 10 s of SIGTERM: killed');
    if (leftovers.length > 0)
      log(`killed ${leftovers.length} leftover descendant processes: ${leftovers.map((p) => `${p.pid} ${p.comm}`).join(', ')}`);
  };
  cleanups.push(async () => {
    await stopService();
    await rm(dataDir, { recursive: true, force: true });
  });
  try {
    log(`service: starting node ${SETTINGS.serviceBin} serve`);
    svc = await startService({ repoRoot: REPO_ROOT, bin: SETTINGS.serviceBin, dataDir, credits: SETTINGS.credits });
    const handle = svc;
    svcResults.keySource = handle.keySource;
    log(`service: pid ${handle.pid} at ${handle.origin}, key from ${handle.keySource}`);
    const capture = async (target: string, extra = ''): Promise<HttpResult> => {
      const r = await timedGet(
        `${handle.origin}/capture?url=${encodeURIComponent(target)}&apiKey=${encodeURIComponent(handle.apiKey)}${extra}`,
      );
      served++;
      if (r.status !== 200 && svcResults.firstErrorBody === undefined) svcResults.firstErrorBody = bodySnippet(r);
      return r;
    };

    // Warm-up: a 503 (the service says "retry shortly") is retried a few times; any other failure,
    // or a 503 that persists, stops the service phase early.
    for (let i = 0; i < SETTINGS.warmup; i++) {
      let r = await capture(realisticUrl);
      for (let attempt = 1; attempt <= 5 && r.status === 503; attempt++) {
        log(`warm-up capture ${i + 1}: 503, retry ${attempt}/5 in 1 s`);
        await sleep(1_000);
        r = await capture(realisticUrl);
      }
      if (!isGoodPng(r, false)) throw new Error(`warm-up capture ${i + 1} failed: ${bodySnippet(r)}\n${handle.outputTail()}`);
      if (i === 0) await writeFile(join(OUT_DIR, 'realistic-service.png'), r.body);
    }
    svcResults.idlePssKb = (await settledPss(handle.pid)).totalKb;

    // Sequential latency.
    log(`service: ${SETTINGS.n} sequential captures of realistic.html`);
    fixtures.resetCounts();
    {
      const samples: number[] = [];
      const bytes: number[] = [];
      const statuses: Record<string, number> = {};
      let errors = 0;
      const cpuStart = treeCpuSeconds(handle.pid);
      const start = nowMs();
      for (let i = 0; i < SETTINGS.n; i++) {
        const r = await capture(realisticUrl);
        statuses[statusKey(r)] = (statuses[statusKey(r)] ?? 0) + 1;
        if (isGoodPng(r, false)) {
          samples.push(r.ms);
          bytes.push(r.body.length);
        } else errors++;
      }
      const wall = nowMs() - start;
      // Sampled after a short pause: the last PNG may still be re-encoded when its response is out.
      await sleep(200);
      const cpuSecondsPerCapture = round((treeCpuSeconds(handle.pid) - cpuStart) / SETTINGS.n, 3);
      svcResults.latency = {
        ...summarize(samples, wall),
        errors,
        statuses,
        resources: resourceCheck(fixtures, SETTINGS.n - errors),
        pngBytesP50: percentile(bytes, 50),
        cpuSecondsPerCapture,
      };
      log(
        `service latency: p50 ${svcResults.latency.p50Ms} ms, p95 ${svcResults.latency.p95Ms} ms, errors ${errors}, PNG ${svcResults.latency.pngBytesP50} B, ${cpuSecondsPerCapture} CPU-s/capture`,
      );
    }

    // Throughput at each concurrency.
    for (const c of SETTINGS.concurrencies) {
      log(`service: ${SETTINGS.throughputRequests} captures at concurrency ${c}`);
      // Every second: reading smaps_rollup of every process costs CPU in the very phase being measured.
      const sampler = c === 4 ? new PssSampler(handle.pid, 1_000) : undefined;
      sampler?.start();
      const samples: number[] = [];
      const statuses: Record<string, number> = {};
      let errors = 0;
      let next = 0;
      const cpuStart = treeCpuSeconds(handle.pid);
      const start = nowMs();
      await Promise.all(
        Array.from({ length: c }, async () => {
          // Bounded: `next` only grows.
          while (next < SETTINGS.throughputRequests) {
            next++;
            const r = await capture(realisticUrl);
            statuses[statusKey(r)] = (statuses[statusKey(r)] ?? 0) + 1;
            if (isGoodPng(r, false)) samples.push(r.ms);
            else errors++;
          }
        }),
      );
      const wallMs = nowMs() - start;
      const run: ThroughputRun = {
        concurrency: c,
        requests: SETTINGS.throughputRequests,
        ok: samples.length,
        errors,
        statuses,
        wallMs: round(wallMs),
        throughputPerS: round((samples.length * 1000) / wallMs, 3),
        p50Ms: round(percentile(samples, 50)),
        p95Ms: round(percentile(samples, 95)),
        cpuSecondsPerCapture: round((treeCpuSeconds(handle.pid) - cpuStart) / SETTINGS.throughputRequests, 3),
      };
      svcResults.throughput.push(run);
      if (sampler) {
        const peak = sampler.stop();
        svcResults.peakPssC4Kb = peak.peakKb;
        svcResults.peakPssC4Processes = peak.peakProcesses;
        svcResults.pssSamplesC4 = peak.samples;
      }
      log(
        `service c=${c}: ${run.throughputPerS}/s, ${run.cpuSecondsPerCapture} CPU-s/capture, errors ${errors}${sampler ? `, peak PSS ${round((svcResults.peakPssC4Kb ?? 0) / 1024)} MiB` : ''}`,
      );
    }

    // Lazy page, full page with scrolling.
    log(`service: lazy page, fullPage + fullPageScroll, 1 warm-up + ${SETTINGS.lazyN}`);
    await capture(lazyUrl, '&fullPage=true&fullPageScroll=true');
    {
      const samples: number[] = [];
      const requested: number[] = [];
      const pngs: Uint8Array[] = [];
      const statuses: Record<string, number> = {};
      let errors = 0;
      const start = nowMs();
      for (let i = 0; i < SETTINGS.lazyN; i++) {
        fixtures.resetCounts();
        const r = await capture(lazyUrl, '&fullPage=true&fullPageScroll=true');
        statuses[statusKey(r)] = (statuses[statusKey(r)] ?? 0) + 1;
        requested.push(lazyImagesRequested(fixtures.counts));
        if (isGoodPng(r, true)) {
          samples.push(r.ms);
          pngs.push(r.body);
        } else errors++;
      }
      const wall = nowMs() - start;
      const painted = pngs.map(paintedLazyImages);
      if (pngs[0]) await writeFile(join(OUT_DIR, 'lazy-service.png'), pngs[0]);
      svcResults.lazy = {
        ...summarize(samples, wall),
        requestedPerCapture: requested,
        paintedPerCapture: painted,
        pngHeights: pngs.map((p) => pngSize(p)?.height ?? 0),
        allLoaded: errors === 0 && requested.every((n) => n === LAZY_COUNT) && painted.every((n) => n === LAZY_COUNT),
        errors,
        statuses,
      };
      log(
        `service lazy: p50 ${svcResults.lazy.p50Ms} ms; requested ${requested.join(',')}; painted ${painted.join(',')}; errors ${errors}`,
      );
    }

    // Memory over a long run at concurrency 2.
    const memory: NonNullable<NonNullable<Results['service']>['memory']> = {
      concurrency: SETTINGS.memoryConcurrency,
      longCaptures: 0,
      errors: 0,
    };
    svcResults.memory = memory;
    const runBatch = async (count: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: SETTINGS.memoryConcurrency }, async () => {
          while (next < count) {
            next++;
            const r = await capture(realisticUrl);
            memory.longCaptures++;
            if (!isGoodPng(r, false)) memory.errors++;
          }
        }),
      );
    };
    log(`service: memory run, ${SETTINGS.memoryFirst} captures at concurrency ${SETTINGS.memoryConcurrency}`);
    await runBatch(SETTINGS.memoryFirst);
    await sleep(1_000);
    const first = await settledPss(handle.pid);
    memory.after50Kb = first.totalKb;
    memory.after50Processes = first.processes;
    memory.totalServedAtFirst = served;
    log(`service: PSS after ${SETTINGS.memoryFirst}: ${round(first.totalKb / 1024)} MiB (${first.processes} processes)`);
    if (!SETTINGS.quick) {
      const rest = SETTINGS.memoryLong - SETTINGS.memoryFirst;
      log(`service: memory run, ${rest} more captures (to ${SETTINGS.memoryLong})`);
      const progress = setInterval(
        () =>
          log(
            `  … ${memory.longCaptures}/${SETTINGS.memoryLong}, errors ${memory.errors}, PSS ${round(treePss(handle.pid).totalKb / 1024)} MiB`,
          ),
        30_000,
      );
      try {
        await runBatch(rest);
      } finally {
        clearInterval(progress);
      }
      await sleep(1_000);
      const long = await settledPss(handle.pid);
      memory.afterLongKb = long.totalKb;
      memory.afterLongProcesses = long.processes;
      memory.totalServedAtLong = served;
      log(
        `service: PSS after ${SETTINGS.memoryLong}: ${round(long.totalKb / 1024)} MiB (${long.processes} processes), errors ${memory.errors}`,
      );
    }
  } catch (e) {
    svcResults.error = e instanceof Error ? e.message : String(e);
    log(`service phase failed: ${svcResults.error}`);
  } finally {
    await stopService();
    await rm(dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const ms = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '—' : `${Math.round(x)} ms`);
const mib = (kb: number | undefined) => (kb === undefined || Number.isNaN(kb) ? '—' : `${(kb / 1024).toFixed(0)} MiB`);
const ratio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '—');
const pass = (ok: boolean): Row['status'] => (ok ? 'PASS' : 'FAIL');

function buildRows(r: Results): Row[] {
  const rows: Row[] = [];
  const raw = r.rawFloor?.realistic;
  const rawLazy = r.rawFloor?.lazy;
  const cw = r.captureWebsite && 'p50Ms' in r.captureWebsite ? r.captureWebsite : undefined;
  const svc = r.service;
  const skipped = SETTINGS.baselinesOnly;
  const missingService = (what: string): Row['measured'] =>
    skipped
      ? 'skipped (BENCH_BASELINES_ONLY=1)'
      : `not measured${svc?.error ? ` (service error: ${svc.error.split('\n')[0]?.slice(0, 160)})` : ''}${what}`;
  const notMeasured: Row['status'] = skipped ? 'n/a' : 'FAIL';

  // 1. latency
  if (svc?.latency && raw) {
    const k = svc.latency.p50Ms / raw.p50Ms;
    rows.push({
      metric: 'Service p50 latency, realistic.html (sequential)',
      measured: `${ms(svc.latency.p50Ms)} (p95 ${ms(svc.latency.p95Ms)}, ${svc.latency.errors} errors; PNG ${svc.latency.pngBytesP50} B, ${svc.latency.cpuSecondsPerCapture} CPU-s/capture) vs raw floor p50 ${ms(raw.p50Ms)} (PNG ${raw.pngBytesP50} B, ${raw.cpuSecondsPerCapture} CPU-s/capture) → ${ratio(k)}`,
      target: `≤ ${TARGETS.latencyRatioMax} × raw floor p50`,
      status: pass(k <= TARGETS.latencyRatioMax && svc.latency.errors === 0),
    });
    const size = svc.latency.pngBytesP50 / raw.pngBytesP50;
    rows.push({
      metric: "PNG size, realistic.html (service ÷ Chromium's default encoding of the raw floor)",
      measured: `${svc.latency.pngBytesP50} B ÷ ${raw.pngBytesP50} B → ${ratio(size)}`,
      target: `≤ ${TARGETS.pngSizeRatioMax}×`,
      status: pass(size <= TARGETS.pngSizeRatioMax),
    });
  } else
    rows.push({
      metric: 'Service p50 latency, realistic.html (sequential)',
      measured: missingService(raw ? '' : '; raw floor missing'),
      target: `≤ ${TARGETS.latencyRatioMax} × raw floor p50`,
      status: notMeasured,
    });

  // 2. throughput
  const c4 = svc?.throughput.find((t) => t.concurrency === 4);
  if (c4 && raw) {
    const k = c4.throughputPerS / raw.throughputPerS;
    const others = svc?.throughput
      .filter((t) => t.concurrency !== 4)
      .map((t) => `c=${t.concurrency} ${t.throughputPerS.toFixed(2)}/s, ${t.cpuSecondsPerCapture ?? '?'} CPU-s/capture, ${t.errors} err`)
      .join('; ');
    rows.push({
      metric: 'Service throughput at concurrency 4',
      measured: `${c4.throughputPerS.toFixed(2)} captures/s, ${c4.cpuSecondsPerCapture ?? '?'} CPU-s/capture, ${c4.errors} errors (${others}) vs raw floor sequential ${raw.throughputPerS.toFixed(2)}/s → ${ratio(k)}`,
      target: '≥ raw floor sequential throughput, 0 errors',
      status: pass(k >= 1 && c4.errors === 0),
    });
  } else
    rows.push({
      metric: 'Service throughput at concurrency 4',
      measured: missingService(raw ? '' : '; raw floor missing'),
      target: '≥ raw floor sequential throughput, 0 errors',
      status: notMeasured,
    });

  // 3. capture-website
  if (cw && svc?.latency) {
    const k = cw.p50Ms / svc.latency.p50Ms;
    rows.push({
      metric: 'capture-website p50 ÷ service p50',
      measured: `${ms(cw.p50Ms)} ÷ ${ms(svc.latency.p50Ms)} = ${ratio(k)}`,
      target: `≥ ${TARGETS.captureWebsiteRatioMin}×`,
      status: pass(k >= TARGETS.captureWebsiteRatioMin),
    });
  } else {
    const cwError = r.captureWebsite && 'error' in r.captureWebsite ? `capture-website error: ${r.captureWebsite.error}` : '';
    rows.push({
      metric: 'capture-website p50 ÷ service p50',
      measured:
        cw && skipped ? `capture-website p50 ${ms(cw.p50Ms)}; service skipped (BENCH_BASELINES_ONLY=1)` : cwError || missingService(''),
      target: `≥ ${TARGETS.captureWebsiteRatioMin}×`,
      status: cwError ? 'FAIL' : notMeasured,
    });
  }

  // 4. lazy page
  if (svc?.lazy && rawLazy) {
    const k = svc.lazy.p50Ms / rawLazy.p50Ms;
    const complete = svc.lazy.requestedPerCapture.filter((n) => n === LAZY_COUNT).length;
    const painted = svc.lazy.paintedPerCapture.filter((n) => n === LAZY_COUNT).length;
    rows.push({
      metric: 'Lazy page (fullPage + fullPageScroll)',
      measured: `all ${LAZY_COUNT} images requested in ${complete}/${svc.lazy.requestedPerCapture.length} captures, painted in ${painted}/${svc.lazy.paintedPerCapture.length}, ${svc.lazy.errors} errors; p50 ${ms(svc.lazy.p50Ms)} vs raw scroll-then-screenshot p50 ${ms(rawLazy.p50Ms)} → ${ratio(k)}`,
      target: `every image loaded; ≤ ${TARGETS.lazyRatioMax} × raw`,
      status: pass(svc.lazy.allLoaded && k <= TARGETS.lazyRatioMax),
    });
  } else
    rows.push({
      metric: 'Lazy page (fullPage + fullPageScroll)',
      measured: missingService(rawLazy ? '' : '; raw lazy baseline missing'),
      target: `every image loaded; ≤ ${TARGETS.lazyRatioMax} × raw`,
      status: notMeasured,
    });

  // 5. peak PSS
  if (svc?.peakPssC4Kb !== undefined) {
    rows.push({
      metric: 'Peak PSS of the service tree at concurrency 4',
      measured: `${mib(svc.peakPssC4Kb)} (${svc.peakPssC4Processes} processes, ${svc.pssSamplesC4} samples; idle after warm-up ${mib(svc.idlePssKb)})`,
      target: '≤ 1 GiB',
      status: pass(svc.peakPssC4Kb <= TARGETS.peakPssMaxKb),
    });
  } else
    rows.push({
      metric: 'Peak PSS of the service tree at concurrency 4',
      measured: missingService(''),
      target: '≤ 1 GiB',
      status: notMeasured,
    });

  // 6. PSS drift
  const mem = svc?.memory;
  if (mem?.after50Kb !== undefined && mem.afterLongKb !== undefined) {
    const drift = (mem.afterLongKb - mem.after50Kb) / mem.after50Kb;
    rows.push({
      metric: `PSS after ${SETTINGS.memoryLong} vs after ${SETTINGS.memoryFirst} captures (concurrency ${mem.concurrency})`,
      measured: `${mib(mem.after50Kb)} → ${mib(mem.afterLongKb)} (${drift >= 0 ? '+' : ''}${(drift * 100).toFixed(1)} %), ${mem.errors} errors`,
      target: `within ${TARGETS.pssDriftMax * 100} %`,
      status: pass(Math.abs(drift) <= TARGETS.pssDriftMax && mem.errors === 0),
    });
  } else if (SETTINGS.quick && mem?.after50Kb !== undefined) {
    rows.push({
      metric: `PSS after ${SETTINGS.memoryLong} vs after ${SETTINGS.memoryFirst} captures`,
      measured: `after ${SETTINGS.memoryFirst}: ${mib(mem.after50Kb)}; long run skipped (BENCH_QUICK=1)`,
      target: `within ${TARGETS.pssDriftMax * 100} %`,
      status: 'n/a',
    });
  } else
    rows.push({
      metric: `PSS after ${SETTINGS.memoryLong} vs after ${SETTINGS.memoryFirst} captures`,
      measured: missingService(''),
      target: `within ${TARGETS.pssDriftMax * 100} %`,
      status: skipped || SETTINGS.quick ? 'n/a' : 'FAIL',
    });

  // Reference figures.
  if (raw) {
    rows.push({
      metric: 'Raw floor (one open page): realistic.html',
      measured: `p50 ${ms(raw.p50Ms)}, p95 ${ms(raw.p95Ms)}, ${raw.throughputPerS.toFixed(2)} captures/s sequential, ${raw.resources.fetchedEveryCapture}/${raw.resources.resources} resources fetched per capture, browser peak PSS ${mib(raw.peakPssKb)}`,
      target: '—',
      status: 'info',
    });
  } else
    rows.push({
      metric: 'Raw floor (one open page): realistic.html',
      measured: `error: ${r.rawFloor?.error ?? 'not measured'}`,
      target: '—',
      status: 'FAIL',
    });
  const shell = r.rawFloor?.shell;
  if (shell) {
    const vsService = 'p50Ms' in shell && svc?.latency ? `; service ÷ it ${ratio(svc.latency.p50Ms / shell.p50Ms)}` : '';
    rows.push({
      metric: 'Reference: raw floor on chromium-headless-shell (the binary the service runs), realistic.html',
      measured: 'p50Ms' in shell ? `p50 ${ms(shell.p50Ms)} (PNG ${shell.pngBytesP50} B, ${shell.cpuSecondsPerCapture} CPU-s/capture)${vsService}` : `error: ${shell.error}`,
      target: '—',
      status: 'info',
    });
  }
  if (rawLazy) {
    rows.push({
      metric: 'Raw scroll-then-screenshot: lazy.html',
      measured: `p50 ${ms(rawLazy.p50Ms)}, p95 ${ms(rawLazy.p95Ms)}; all ${LAZY_COUNT} requested in ${rawLazy.requestedPerCapture.filter((n) => n === LAZY_COUNT).length}/${rawLazy.requestedPerCapture.length}, painted in ${rawLazy.paintedPerCapture.filter((n) => n === LAZY_COUNT).length}/${rawLazy.paintedPerCapture.length}; PNG height ${rawLazy.pngHeights[0] ?? '—'} px`,
      target: '—',
      status: 'info',
    });
  }
  if (cw) {
    rows.push({
      metric: 'capture-website (browser per capture): realistic.html',
      measured: `p50 ${ms(cw.p50Ms)}, p95 ${ms(cw.p95Ms)} over ${cw.n}, ${cw.resources.fetchedEveryCapture}/${cw.resources.resources} resources fetched per capture`,
      target: '—',
      status: 'info',
    });
  }
  if (svc?.latency) {
    rows.push({
      metric: 'Service sequential throughput',
      measured: `${svc.latency.throughputPerS.toFixed(2)} captures/s; ${svc.latency.resources.fetchedEveryCapture}/${svc.latency.resources.resources} resources fetched per capture`,
      target: '—',
      status: 'info',
    });
  }
  if (svc?.stop) {
    rows.push({
      metric: 'Service shutdown (SIGTERM)',
      measured: `${svc.stop.exitedGracefully ? 'exited within 10 s' : 'did not exit within 10 s: SIGKILL'}; ${svc.stop.leftoverProcesses === 0 ? 'no descendant process left behind' : `${svc.stop.leftoverProcesses} descendant processes still running 5 s later (killed)`}`,
      target: '—',
      status: 'info',
    });
  }
  return rows;
}

function markdown(r: Results): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const lines = [
    '| metric | measured | target | pass/fail |',
    '| --- | --- | --- | --- |',
    ...r.rows.map((row) => `| ${esc(row.metric)} | ${esc(row.measured)} | ${esc(row.target)} | ${row.status} |`),
  ];
  const meta = r.meta;
  return [
    `# Rendershot benchmark — ${meta.date}`,
    '',
    `Node ${meta.node}, ${meta.chromium ?? 'Chromium ?'}, ${meta.cpus} CPUs, ${meta.totalMemMiB} MiB RAM. Viewport ${VIEWPORT.width}×${VIEWPORT.height}, PNG. ` +
      `N=${SETTINGS.n} (+${SETTINGS.warmup} warm-up), ${SETTINGS.throughputRequests} requests per concurrency level, lazy N=${SETTINGS.lazyN}, capture-website N=${SETTINGS.captureWebsiteN}. ` +
      `Load average (1 min) ${meta.loadAvgStart} at the start, ${meta.loadAvgEnd ?? '?'} at the end${Math.max(meta.loadAvgStart, meta.loadAvgEnd ?? 0) > meta.cpus ? ' — other work was running: figures are noisy' : ''}.`,
    '',
    ...lines,
    '',
    ...meta.notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
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
    log('reference: the raw floor on chromium-headless-shell');
    const shell = await measureShellFloor(realisticUrl, SETTINGS.n, SETTINGS.warmup).catch((e: unknown) => ({ error: String(e) }));
    if (shell && results.rawFloor) results.rawFloor.shell = shell;
    await measureCaptureWebsite(fixtures, results, realisticUrl);
    if (!SETTINGS.baselinesOnly) await measureService(fixtures, results, realisticUrl, lazyUrl);
    // The cost of Chromium's sandbox and of one organization per renderer (issue #14), its own service.
    if (!SETTINGS.baselinesOnly && !flagEnv('BENCH_NO_ORGS')) {
      log('organizations: the sandbox and four organizations alternating');
      const floorRate = results.rawFloor?.realistic?.throughputPerS ?? Number.NaN;
      const organizations = await measureOrganizations(realisticUrl, floorRate).catch((e: unknown) => ({ markdown: `failed: ${String(e)}`, failures: 1 }));
      organizationsMd = `\n## Chromium sandbox and one organization per renderer (issue #14)\n\n${organizations.markdown}\n`;
      if (organizations.failures > 0) results.meta.notes.push(`organizations: ${organizations.failures} failed captures`);
    }
  } finally {
    await runCleanups();
  }
  // removeAds and removeCookieBanners on pages with and without a consent manager and ads (its own service).
  let filtersMd = '';
  if (!SETTINGS.baselinesOnly && !flagEnv('BENCH_NO_FILTERS')) {
    log('content filters: removeAds and removeCookieBanners overheads');
    const filters = await measureContentFilters().catch((e: unknown) => ({ markdown: `content filters failed: ${String(e)}`, failures: 1 }));
    filtersMd = `\n## removeAds and removeCookieBanners (BENCH_FILTERS_N per page and options)\n\n${filters.markdown}\n`;
    if (filters.failures > 0) results.meta.notes.push(`content filters: ${filters.failures} failed captures`);
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

  results.meta.loadAvgEnd = round(loadavg()[0] ?? Number.NaN, 2);
  results.rows = buildRows(results);
  const md = markdown(results) + organizationsMd + filtersMd + fullPageMd;
  process.stdout.write(`\n${md}\n`);
  await writeFile(join(OUT_DIR, 'results.md'), md);
  await writeFile(join(OUT_DIR, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${join(OUT_DIR, 'results.md')} and results.json`);

  const failed = fullPageFailed || results.rows.some((row) => row.status === 'FAIL');
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

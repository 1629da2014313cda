/** The service phase of `npm run bench`: sequential latency, throughput at concurrency 1/2/4, the lazy page, memory. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bodySnippet, isGoodPng, paintedLazyImages, resourceCheck, statusKey } from './checks.js';
import { lazyImagesRequested, type FixtureServer } from './fixture-server.js';
import { LAZY_COUNT, REPO_ROOT } from './make-fixtures.js';
import { treeCpuSeconds } from './proc-cpu.js';
import { PssSampler, settledPss, treePss } from './proc-mem.js';
import type { Results, ThroughputRun } from './results.js';
import { cleanups, log } from './run-log.js';
import { startService, timedGet, type HttpResult, type ServiceHandle } from './service.js';
import { OUT_DIR, SETTINGS } from './settings.js';
import { nowMs, percentile, pngSize, round, sleep, summarize } from './stats.js';

export async function measureService(fixtures: FixtureServer, results: Results, realisticUrl: string, lazyUrl: string): Promise<void> {
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

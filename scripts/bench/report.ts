/** The benchmark's Markdown report: one row per figure, against its target. */
import { VIEWPORT } from './baselines.js';
import { LAZY_COUNT } from './make-fixtures.js';
import type { Results, Row } from './results.js';
import { SETTINGS, TARGETS } from './settings.js';

export const ms = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '—' : `${Math.round(x)} ms`);
export const mib = (kb: number | undefined) => (kb === undefined || Number.isNaN(kb) ? '—' : `${(kb / 1024).toFixed(0)} MiB`);
export const ratio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '—');
export const pass = (ok: boolean): Row['status'] => (ok ? 'PASS' : 'FAIL');

export function buildRows(r: Results): Row[] {
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
  const full = r.rawFloor?.fullBrowser;
  if (full) {
    const vsService = 'p50Ms' in full && svc?.latency ? `; service ÷ it ${ratio(svc.latency.p50Ms / full.p50Ms)}` : '';
    rows.push({
      metric: "Reference: raw floor on the full Chromium (/usr/bin/chromium, puppeteer's usual browser), realistic.html",
      measured:
        'p50Ms' in full
          ? `p50 ${ms(full.p50Ms)} (PNG ${full.pngBytesP50} B, ${full.cpuSecondsPerCapture} CPU-s/capture)${vsService}`
          : `error: ${full.error}`,
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

export function markdown(r: Results): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const lines = [
    '| metric | measured | target | pass/fail |',
    '| --- | --- | --- | --- |',
    ...r.rows.map((row) => `| ${esc(row.metric)} | ${esc(row.measured)} | ${esc(row.target)} | ${row.status} |`),
  ];
  const meta = r.meta;
  return [
    `# Daguerre benchmark — ${meta.date}`,
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

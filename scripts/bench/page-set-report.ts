/** The page set's tables (docs/performance.md): one row per page, sequential and at 4 clients, and its targets. */
import { concurrentPlan } from './page-set-phases.js';
import { mib, pass, ratio } from './report.js';
import type { PageSetPage, PageSetResults, Row } from './results.js';
import { PAGE_SET_SETTINGS, PAGE_SET_TARGETS } from './settings.js';
import { percentile } from './stats.js';

const esc = (cell: string | number) => String(cell).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const tableRow = (cells: (string | number)[]) => `| ${cells.map(esc).join(' | ')} |`;
/** A row of a page that has no figures: its error, then empty cells. */
const failedRow = (p: PageSetPage, columns: number) =>
  tableRow([p.page, p.error ?? 'not measured', ...Array<string>(columns - 2).fill('')]);

/** A ratio with a mark when it misses its target. */
function marked(x: number | undefined, ok: (x: number) => boolean): string {
  if (x === undefined || !Number.isFinite(x)) return '—';
  return `${ratio(x)}${ok(x) ? '' : ' ✗'}`;
}

const TARGET = PAGE_SET_TARGETS;
const latencyOk = (x: number) => x <= TARGET.latencyRatioMax;
const throughputOk = (x: number) => x >= TARGET.throughputRatioMin;
const pngOk = (x: number) => x <= TARGET.pngPageRatioMax;
const lossyOk = (x: number) => x <= TARGET.lossyRatioMax;

function sequentialRow(p: PageSetPage): string {
  const s = p.sequential;
  const b = p.bytes;
  if (!s) return failedRow(p, 11);
  return tableRow([
    p.page + (p.fullPage ? ' (full page)' : ''),
    `${s.service.p50Ms} / ${s.service.p95Ms}`,
    `${s.floor.p50Ms} / ${s.floor.p95Ms}`,
    marked(s.p50Ratio, latencyOk),
    `${s.service.cpuSecondsPerCapture ?? '—'} / ${s.floor.cpuSecondsPerCapture ?? '—'}`,
    `${mib(s.service.peakPssKb)} / ${mib(s.floor.peakPssKb)}`,
    b ? `${b.png.service} / ${b.png.floor}` : '—',
    marked(b?.png.ratio, pngOk),
    p.serverTimingP50?.encode ?? '—',
    marked(b?.jpeg.ratio, lossyOk),
    marked(b?.webp.ratio, lossyOk),
  ]);
}

function concurrentRow(p: PageSetPage): string {
  const c = p.concurrent;
  if (!c) return failedRow(p, 8);
  return tableRow([
    p.page,
    c.service.perSecond,
    c.floor.perSecond,
    marked(c.ratio, throughputOk),
    `${c.service.cpuSecondsPerCapture ?? '—'} / ${c.floor.cpuSecondsPerCapture ?? '—'}`,
    `${c.service.machineCpuSecondsPerCapture ?? '—'} / ${c.floor.machineCpuSecondsPerCapture ?? '—'}`,
    `${mib(c.service.peakPssKb)} / ${mib(c.floor.peakPssKb)}`,
    `${c.service.errors} / ${c.floor.errors}`,
  ]);
}

/** The service beside browserless: its figures, and the service's ÷ its (latency lower is better, throughput higher). */
function browserlessRow(p: PageSetPage): string {
  const s = p.sequential;
  const c = p.concurrent;
  if (!s?.browserless || !c?.browserless) return failedRow(p, 10);
  const b = { s: s.browserless, c: c.browserless };
  return tableRow([
    p.page,
    `${b.s.p50Ms} / ${b.s.p95Ms}`,
    ratio(s.service.p50Ms / b.s.p50Ms),
    `${c.service.perSecond} / ${b.c.perSecond}`,
    ratio(c.service.perSecond / b.c.perSecond),
    `${s.service.machineCpuSecondsPerCapture ?? '—'} / ${b.s.machineCpuSecondsPerCapture ?? '—'}`,
    `${c.service.machineCpuSecondsPerCapture ?? '—'} / ${b.c.machineCpuSecondsPerCapture ?? '—'}`,
    `${mib(c.service.peakPssKb)} / ${mib(b.c.peakPssKb)}`,
    `${s.service.pngBytesP50} / ${b.s.pngBytesP50}`,
    `${b.s.errors} / ${b.c.errors}`,
  ]);
}

function browserlessSection(r: PageSetResults): string[] {
  const b = r.browserless;
  if (!b) return [];
  if ('error' in b) return ['', `browserless: not run (${esc(b.error)}).`];
  return [
    '',
    `Beside ${b.version} (its own server and defaults, Debian's full Chromium; one POST /chromium/screenshot a capture, goto(load), which starts a browser for the request and closes it after the answer; the next turn waits until that browser is gone), in the same runs. Ratios are the service's ÷ browserless's. ` +
      "CPU is the machine's busy time during each contender's own turns ÷ its captures: the helpers of browserless's browsers leave its process tree when a browser exits, so its tree's CPU falls short. Each turn ends once the contender's tree is quiet (the service's reset after its answer is its own).",
    '',
    '| page | browserless p50 / p95 ms | p50 ratio | captures/s at 4 clients service / browserless | ratio | machine CPU-s/capture sequential service / browserless | machine CPU-s/capture at 4 clients service / browserless | peak PSS at 4 clients service / browserless | PNG bytes service / browserless | browserless errors sequential / 4 clients |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...r.pages.map(browserlessRow),
  ];
}

/** One target over every page: the worst page and the pages that miss it. */
function perPageCheck(
  metric: string,
  target: string,
  pages: PageSetPage[],
  value: (p: PageSetPage) => number | undefined,
  ok: (x: number) => boolean,
  worst: 'max' | 'min',
): Row {
  const measured = pages.map((p) => ({ page: p.page, x: value(p) }));
  const missing = measured.filter((m) => m.x === undefined || !Number.isFinite(m.x));
  const values = measured.filter((m): m is { page: string; x: number } => m.x !== undefined && Number.isFinite(m.x));
  const misses = values.filter((m) => !ok(m.x));
  const extreme = values.reduce<{ page: string; x: number } | undefined>(
    (w, m) => (!w || (worst === 'max' ? m.x > w.x : m.x < w.x) ? m : w),
    undefined,
  );
  const parts = [extreme ? `worst ${ratio(extreme.x)} (${extreme.page})` : 'nothing measured'];
  if (misses.length) parts.push(`missed on ${misses.map((m) => `${m.page} ${ratio(m.x)}`).join(', ')}`);
  if (missing.length) parts.push(`not measured on ${missing.map((m) => m.page).join(', ')}`);
  return { metric, measured: parts.join('; '), target, status: pass(values.length > 0 && misses.length === 0 && missing.length === 0) };
}

export function pageSetChecks(pages: PageSetPage[]): Row[] {
  const pngRatios = pages.map((p) => p.bytes?.png.ratio).filter((x): x is number => x !== undefined && Number.isFinite(x));
  const pngMedian = percentile(pngRatios, 50);
  const errors = pages.reduce(
    (sum, p) =>
      sum +
      (p.sequential ? p.sequential.service.errors + p.sequential.floor.errors : 0) +
      (p.concurrent ? p.concurrent.service.errors + p.concurrent.floor.errors : 0),
    0,
  );
  return [
    perPageCheck(
      'Sequential p50, service ÷ floor',
      `≤ ${TARGET.latencyRatioMax}× on each page`,
      pages,
      (p) => p.sequential?.p50Ratio,
      latencyOk,
      'max',
    ),
    perPageCheck(
      'Captures/s at 4 clients, service ÷ 4 kept pages',
      `≥ ${TARGET.throughputRatioMin}× on each page`,
      pages,
      (p) => p.concurrent?.ratio,
      throughputOk,
      'min',
    ),
    perPageCheck(
      "PNG bytes, service ÷ Chromium's default",
      `≤ ${TARGET.pngPageRatioMax}× on each page`,
      pages,
      (p) => p.bytes?.png.ratio,
      pngOk,
      'max',
    ),
    {
      metric: "PNG bytes, service ÷ Chromium's default, median over the set",
      measured: Number.isFinite(pngMedian) ? `${ratio(pngMedian)} over ${pngRatios.length} pages` : 'not measured',
      target: `≤ ${TARGET.pngMedianRatioMax}×`,
      status: pass(pngMedian <= TARGET.pngMedianRatioMax),
    },
    perPageCheck(
      `JPEG q${PAGE_SET_SETTINGS.lossyQuality} bytes, service ÷ floor`,
      `≤ ${TARGET.lossyRatioMax}× on each page`,
      pages,
      (p) => p.bytes?.jpeg.ratio,
      lossyOk,
      'max',
    ),
    perPageCheck(
      `WebP q${PAGE_SET_SETTINGS.lossyQuality} bytes, service ÷ floor`,
      `≤ ${TARGET.lossyRatioMax}× on each page`,
      pages,
      (p) => p.bytes?.webp.ratio,
      lossyOk,
      'max',
    ),
    { metric: 'Failed captures (service and floor)', measured: String(errors), target: '0', status: pass(errors === 0) },
  ];
}

export function pageSetMarkdown(r: PageSetResults): string {
  const s = r.settings;
  const withBrowserless = r.browserless !== undefined && 'version' in r.browserless;
  const plan = concurrentPlan(withBrowserless ? 3 : 2, s.c4Requests);
  const timings = r.pages
    .filter((p) => p.serverTimingP50 && Object.keys(p.serverTimingP50).length > 0)
    .map(
      (p) =>
        `${p.page}: ${Object.entries(p.serverTimingP50 ?? {})
          .map(([stage, ms]) => `${stage} ${ms}`)
          .join(', ')}`,
    );
  const notes = r.pages.flatMap((p) => p.notes.map((n) => `- ${p.page}: ${n}`));
  const memory = r.memoryPerOrganization;
  const memoryLine =
    memory === undefined
      ? 'not measured'
      : 'error' in memory
        ? `failed: ${memory.error}`
        : `${memory.perOrganizationMiB} MiB per organization (service tree ${mib(memory.oneKb)} with one organization, ${mib(memory.fourKb)} after 4 organizations captured once each; ${memory.processesOne} → ${memory.processesFour} processes)`;
  return [
    `Floor: a kept puppeteer page on ${r.floorBrowser} (chromium-headless-shell, the binary the service runs), goto(load) + Chromium's default screenshot. ` +
      `Viewport 1920×1080. ${s.n} sequential rounds per page (a capture by the service, the floor${withBrowserless ? ' and browserless' : ''}, every order of them in turn from round to round; after ${s.warmup} warm-up rounds); ` +
      `${plan.rounds * plan.perRound} captures per contender and page at 4 clients in ${plan.rounds} rounds of ${plan.perRound}, ordered as the sequential ones; bytes of ${s.bytesN} captures per format (JPEG/WebP at quality ${s.lossyQuality}).`,
    '',
    '| page | service p50 / p95 ms | floor p50 / p95 ms | p50 ratio | CPU-s/capture service / floor | peak PSS service / floor | PNG bytes service / floor | PNG ratio | PNG encode p50 ms | JPEG ratio | WebP ratio |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...r.pages.map(sequentialRow),
    '',
    '4 clients: the service with 4 request loops, the floor with 4 kept pages in one browser (an incognito context each).',
    '',
    '| page | service captures/s | floor captures/s | ratio | CPU-s/capture service / floor | machine CPU-s/capture service / floor | peak PSS service / floor | errors service / floor |',
    '|---|---|---|---|---|---|---|---|',
    ...r.pages.map(concurrentRow),
    ...browserlessSection(r),
    '',
    `- Memory per organization for the context pool: ${memoryLine}.`,
    ...(timings.length ? [`- Service Server-Timing p50 (ms), sequential: ${timings.join('; ')}.`] : []),
    "- PNG encode: the service's re-encoding of Chromium's fast PNG (Server-Timing `encode`, p50 of the sequential PNG captures).",
    "- CPU-s per capture: user + system time of the service tree (Node and its Chromium) or of the floor browser tree over the alternating run ÷ its captures; machine CPU-s: the busy time of every core during its own rounds at 4 clients ÷ its captures (its clients, the fixture server and the kernel included); —: a browser of the tree exited during the run (the service recycles its browser), taking its helpers' CPU out of the tree's count. Each sequential turn starts once the previous contender's tree has used no CPU for two looks 30 ms apart (its reset, its closing browser). ✗: misses its target.",
    ...notes.map(esc),
    '',
    '| target | measured | wanted | status |',
    '|---|---|---|---|',
    ...r.checks.map((c) => tableRow([c.metric, c.measured, c.target, c.status])),
  ].join('\n');
}

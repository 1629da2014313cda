/**
 * What removeAds and removeCookieBanners cost (`npx tsx scripts/bench/content-filters.ts`).
 *
 * Starts the service (the real CLI, as scripts/bench.ts does) and a fixture server on loopback,
 * then captures, over HTTP and one at a time, each page with each combination of options, the
 * combinations taking turns so that a drift of the machine's load spreads over all of them:
 *   - tests/fixtures/pages/ads/news.html: a news page with four ad slots and a tracker, no consent
 *     manager (removeCookieBanners here is the fixed cost of looking for one);
 *   - tests/fixtures/pages/cmp/onetrust.html: a OneTrust banner that autoconsent refuses, no ads;
 *   - tests/fixtures/pages/cmp/cookiebot.html: a Cookiebot banner (its refusal takes autoconsent 1.5 s);
 *   - tests/fixtures/pages/cmp/onetrust-markup-only.html: OneTrust's markup without its script (a
 *     half-present consent manager: nothing can be refused, the option must still cost under 1 s).
 * Prints a Markdown table (median, p90, mean, the median's difference from the same page with
 * both options off, the median PNG size and the CPU-seconds of the service's process tree per
 * capture) and exits 0, or 1 when a capture failed. `npm run bench` runs it too (measureContentFilters).
 *
 * Environment: BENCH_FILTERS_N=10 captures per page and combination (after 2 warm-up captures each).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FixtureServer } from '../../tests/helpers/fixture-server.js';
import { REPO_ROOT } from './make-fixtures.js';
import { treeCpuSeconds } from './proc-cpu.js';
import { startService, timedGet } from './service.js';
import { percentile, round } from './stats.js';
import { runWhenInvokedDirectly } from './standalone.js';

const N = Number(process.env.BENCH_FILTERS_N ?? 10);
if (!Number.isInteger(N) || N < 1 || N > 1_000)
  throw new Error(`BENCH_FILTERS_N must be a whole number from 1 to 1000 (got ${process.env.BENCH_FILTERS_N})`);
const WARMUP = 2;

interface Mode {
  label: string;
  params: Record<string, string>;
}
const OFF: Mode = { label: 'off', params: {} };
const CASES: Array<{ page: string; modes: Mode[] }> = [
  {
    page: '/ads/news.html',
    modes: [
      OFF,
      { label: 'removeAds', params: { removeAds: 'true' } },
      { label: 'removeCookieBanners', params: { removeCookieBanners: 'true' } },
      { label: 'both', params: { removeAds: 'true', removeCookieBanners: 'true' } },
    ],
  },
  {
    page: '/cmp/onetrust.html',
    modes: [
      OFF,
      { label: 'removeCookieBanners', params: { removeCookieBanners: 'true' } },
      { label: 'removeAds', params: { removeAds: 'true' } },
    ],
  },
  { page: '/cmp/cookiebot.html', modes: [OFF, { label: 'removeCookieBanners', params: { removeCookieBanners: 'true' } }] },
  { page: '/cmp/onetrust-markup-only.html', modes: [OFF, { label: 'removeCookieBanners', params: { removeCookieBanners: 'true' } }] },
];

/** 127.0.0.2 → the fixture server: the ad list turns generic element hiding off on 127.0.0.1 and localhost. */
async function startRelay(targetPort: number): Promise<{ origin: string; close: () => void }> {
  const server = createServer((inbound) => {
    const outbound = connect(targetPort, '127.0.0.1');
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', () => resolve()));
  return { origin: `http://127.0.0.2:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

/** Captures every page with every combination of options; returns the Markdown table and the number of failed captures. */
export async function measureContentFilters(): Promise<{ markdown: string; failures: number }> {
  const fixture = await new FixtureServer().start();
  const news = await readFile(join(REPO_ROOT, 'tests/fixtures/pages/ads/news.html'), 'utf8');
  fixture.page('/ads/news.html', news.replaceAll('{{AD_ORIGIN}}', fixture.url));
  const relay = await startRelay(Number(new URL(fixture.url).port));
  const dataDir = await mkdtemp(join(tmpdir(), 'daguerre-bench-filters-'));
  const service = await startService({ repoRoot: REPO_ROOT, dataDir, credits: 1_000_000 });
  let failures = 0;
  let markdown = '';
  try {
    console.log(`service ${service.origin}, ${N} captures per page and options (+${WARMUP} warm-up), 1280×800 PNG`);
    const rows: string[] = [];
    for (const { page, modes } of CASES) {
      const samples = new Map<string, number[]>(modes.map((mode) => [mode.label, []]));
      const sizes = new Map<string, number[]>(modes.map((mode) => [mode.label, []]));
      const cpu = new Map<string, number[]>(modes.map((mode) => [mode.label, []]));
      for (let round_ = 0; round_ < WARMUP + N; round_++) {
        for (const mode of modes) {
          const query = new URLSearchParams({
            url: `${relay.origin}${page}`,
            viewportWidth: '1280',
            viewportHeight: '800',
            apiKey: service.apiKey,
            ...mode.params,
          });
          const cpuBefore = treeCpuSeconds(service.pid);
          const result = await timedGet(`${service.origin}/capture?${query}`);
          const cpuSeconds = treeCpuSeconds(service.pid) - cpuBefore;
          if (result.status !== 200) {
            failures++;
            console.error(
              `  ${page} ${mode.label}: HTTP ${result.status} ${result.error ?? new TextDecoder().decode(result.body).slice(0, 200)}`,
            );
            continue;
          }
          if (round_ >= WARMUP) {
            samples.get(mode.label)!.push(result.ms);
            sizes.get(mode.label)!.push(result.body.length);
            cpu.get(mode.label)!.push(cpuSeconds);
          }
        }
      }
      const baseline = percentile(samples.get(OFF.label)!, 50);
      for (const mode of modes) {
        const ms = samples.get(mode.label)!;
        const p50 = percentile(ms, 50);
        const mean = ms.reduce((sum, x) => sum + x, 0) / ms.length;
        const delta = mode === OFF ? '' : `${p50 - baseline >= 0 ? '+' : ''}${round(p50 - baseline, 0)}`;
        const cpuMean = cpu.get(mode.label)!.reduce((sum, x) => sum + x, 0) / Math.max(1, ms.length);
        rows.push(
          `| ${page} | ${mode.label} | ${ms.length} | ${round(p50, 0)} | ${round(percentile(ms, 90), 0)} | ${round(mean, 0)} | ${delta} | ${percentile(sizes.get(mode.label)!, 50)} | ${round(cpuMean, 3)} |`,
        );
      }
    }
    markdown = [
      '| page | options | n | p50 ms | p90 ms | mean ms | Δ p50 vs off | PNG bytes p50 | CPU-s/capture |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n');
  } finally {
    await service.stop();
    relay.close();
    await fixture.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  return { markdown, failures };
}

runWhenInvokedDirectly(import.meta.url, measureContentFilters);

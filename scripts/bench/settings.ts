/** The benchmark's settings (environment variables, see scripts/bench.ts) and the targets it checks. */
import { join } from 'node:path';
import { REPO_ROOT } from './make-fixtures.js';
import { DEFAULT_BIN } from './service.js';

export function intEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max} (got ${raw})`);
  return n;
}
export function flagEnv(name: string): boolean {
  const raw = (process.env[name] ?? '').toLowerCase();
  return raw === '1' || raw === 'true' || raw === 'yes';
}

/** The environment variable `name` as service settings, `NAME=value NAME=value` (unset or empty: none). */
export function settingsEnv(name: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const pair of (process.env[name] ?? '').split(/\s+/).filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`${name}: "${pair}" is not NAME=value`);
    settings[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return settings;
}

export const SETTINGS = {
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

export const TARGETS = {
  // The service at the raw floor's speed while its PNGs are as small as Chromium's default ones.
  latencyRatioMax: 1.0,
  pngSizeRatioMax: 1.05,
  captureWebsiteRatioMin: 4,
  lazyRatioMax: 1.5,
  peakPssMaxKb: 1024 * 1024,
  pssDriftMax: 0.15,
};

/** The page set (page-set.ts, docs/performance.md): the service against a kept page on the binary it runs, page by page. */
const setN = intEnv('BENCH_SET_N', 15, 1, 10_000);
export const PAGE_SET_SETTINGS = {
  /** Sequential rounds per page: a capture by each contender, in an order that changes from round to round. */
  n: setN,
  /** Captures per contender and page at 4 clients; by default about twice n, a multiple of 4, at least 8. */
  c4Requests: intEnv('BENCH_SET_C4_N', Math.max(8, 4 * Math.ceil(setN / 2)), 4, 10_000),
  /** Captures per contender, page and lossy format for the file sizes (they are deterministic). */
  bytesN: 2,
  warmup: 2,
  lossyQuality: 80,
  /** Names of the pages to run (BENCH_SET_PAGES=text,photo); empty: all of them. */
  pages: (process.env.BENCH_SET_PAGES ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean),
  skip: flagEnv('BENCH_NO_SET'),
  /** browserless as a third contender (browserless.ts); BENCH_BROWSERLESS=0 leaves it out. */
  browserless: !['0', 'false', 'no'].includes((process.env.BENCH_BROWSERLESS ?? '').toLowerCase()),
};

export const PAGE_SET_TARGETS = {
  latencyRatioMax: 1.0,
  throughputRatioMin: 1.0,
  pngMedianRatioMax: 1.0,
  pngPageRatioMax: 1.05,
  lossyRatioMax: 1.0,
};

export const OUT_DIR = join(REPO_ROOT, '.bench');

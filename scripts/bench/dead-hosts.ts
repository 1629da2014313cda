/**
 * Pages that name dead third-party hosts (`npx tsx scripts/bench/dead-hosts.ts`): what they cost a
 * capture through Daguerre's egress proxy beside the same headless shell without any proxy.
 *
 * A fixture page on loopback draws 3 images of its own and 40 images on 20 hosts that do not
 * resolve (names under `.invalid`, new names on every capture, so no answer is kept from the one
 * before: every capture meets the hosts for the first time, as a capture of a new page does). The
 * same page without the dead images is the control. Daguerre: the real CLI's `serve`, one capture
 * at a time over HTTP (1280×800 PNG). The plain shell: chromium-headless-shell launched once by
 * puppeteer, a new page per capture, `goto` until load, then a screenshot. Prints p50, p90 and max
 * latency of each, and exits 1 when a capture failed.
 *
 * Environment: BENCH_DEAD_N=10 captures of each (after 1 warm-up each).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { FixtureServer } from '../../tests/helpers/fixture-server.js';
import { HEADLESS_SHELL } from '../../server/src/chromium-binaries.js';
import { REPO_ROOT } from './make-fixtures.js';
import { startService, timedGet } from './service.js';
import { nowMs, percentile, round } from './stats.js';
import { runWhenInvokedDirectly } from './standalone.js';

const N = Number(process.env.BENCH_DEAD_N ?? 10);
if (!Number.isInteger(N) || N < 1 || N > 1_000)
  throw new Error(`BENCH_DEAD_N must be a whole number from 1 to 1000 (got ${process.env.BENCH_DEAD_N})`);

const PIXEL = Buffer.from('R0lGODlhAQABAIAAAP8AAAAAACH5BAAAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
let served = 0;

/** The page: its own images, and with `dead`, 40 images on 20 names no one has asked for before. */
function page(dead: boolean): string {
  served += 1;
  const own = [1, 2, 3].map((i) => `<img src="/pixel.gif?${i}" width="40" height="40">`).join('');
  const deadImages = dead
    ? Array.from(
        { length: 40 },
        (_, i) => `<img src="http://tracker-${i % 20}.c${served}-${process.pid}.invalid/p${i}.gif" width="8" height="8">`,
      ).join('')
    : '';
  return `<!doctype html><title>Article</title><h1>An article</h1><p>${'Text of the article. '.repeat(40)}</p>${own}${deadImages}`;
}

const summary = (label: string, ms: number[]) =>
  `| ${label} | ${ms.length} | ${round(percentile(ms, 50), 0)} | ${round(percentile(ms, 90), 0)} | ${round(Math.max(...ms), 0)} |`;

export async function measureDeadHosts(): Promise<{ markdown: string; failures: number }> {
  const fixture = await new FixtureServer()
    .route('/dead.html', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page(true)))
    .route('/control.html', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page(false)))
    .route('/pixel.gif', (_req, res) => res.writeHead(200, { 'content-type': 'image/gif' }).end(PIXEL))
    .start();
  const dataDir = await mkdtemp(join(tmpdir(), 'daguerre-bench-dead-'));
  const service = await startService({
    repoRoot: REPO_ROOT,
    dataDir,
    credits: 1_000_000,
    env: { EGRESS_ALLOW_LIST: new URL(fixture.url).host },
  });
  const browser = await puppeteer.launch({ executablePath: HEADLESS_SHELL, args: ['--no-sandbox'] });
  const times = new Map<string, number[]>();
  const note = (label: string, ms: number) => times.set(label, [...(times.get(label) ?? []), ms]);
  let failures = 0;
  try {
    for (let round_ = 0; round_ < N + 1; round_++) {
      for (const path of ['/dead.html', '/control.html']) {
        const query = new URLSearchParams({
          url: `${fixture.url}${path}`,
          viewportWidth: '1280',
          viewportHeight: '800',
          apiKey: service.apiKey,
        });
        const result = await timedGet(`${service.origin}/capture?${query}`);
        if (result.status !== 200) {
          failures += 1;
          console.error(`  daguerre ${path}: HTTP ${result.status} ${result.error ?? new TextDecoder().decode(result.body).slice(0, 200)}`);
        } else if (round_ > 0) note(`Daguerre ${path}`, result.ms);
        const tab = await browser.newPage();
        await tab.setViewport({ width: 1280, height: 800 });
        const start = nowMs();
        await tab.goto(`${fixture.url}${path}`, { waitUntil: 'load' });
        await tab.screenshot();
        if (round_ > 0) note(`plain headless shell ${path}`, nowMs() - start);
        await tab.close();
      }
    }
  } finally {
    await browser.close();
    await service.stop();
    await fixture.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  const markdown = [
    '| capture | n | p50 ms | p90 ms | max ms |',
    '|---|---|---|---|---|',
    ...[...times].map(([label, ms]) => summary(label, ms)),
  ].join('\n');
  return { markdown, failures };
}

runWhenInvokedDirectly(import.meta.url, measureDeadHosts);

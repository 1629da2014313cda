/**
 * The page set (docs/performance.md; `npm run bench:pages` alone, `npm run bench` runs it too): the
 * service against the floor of the binary it runs — a kept puppeteer page on
 * chromium-headless-shell — on pages of different kinds, each reported on its own row, all in one
 * process:
 *   text      a plain text-and-boxes page, as a new user tries first (page-set-fixtures.ts);
 *   pictures  the bench's news page with pictures (make-fixtures.ts, realistic.html);
 *   photo     one large photographic picture (page-set-photo.ts);
 *   charts    a dashboard of inline SVG charts and a table (page-set-charts.ts);
 *   long      a long article, captured full page;
 *   heise, mozilla, nytimes  real saved pages that load nothing remote (tests/fixtures/pages/insight/real);
 *             nytimes has 17 iframes, which make a capture's DevTools traffic several times heise's;
 *   prose-serif, prose-sans, plain, wiki, readme  plain text pages: paragraphs in a serif and a sans
 *             font, a plain-text document, an encyclopedia article with links, a README (page-set-plain.ts).
 * browserless 2.42 takes turns with them on every page, for comparison (browserless.ts).
 * What is measured on each page: page-set-phases.ts; the tables and targets: page-set-report.ts.
 * Then the memory each organization adds to the service's context pool.
 *
 * Environment: BENCH_SET_N=15 sequential rounds per page, BENCH_SET_C4_N captures per contender and
 * page at 4 clients (default about 2 × BENCH_SET_N), BENCH_SET_PAGES=text,photo to run a subset,
 * BENCH_NO_SET=1 to leave the section out of `npm run bench`, BENCH_BROWSERLESS=0 to leave browserless out.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FixtureServer } from './fixture-server.js';
import { REPO_ROOT } from './make-fixtures.js';
import { servePageSetFixtures } from './page-set-fixtures.js';
import { concurrentPlan, concurrentRounds, lossyBytes, sequentialPairs } from './page-set-phases.js';
import { pageSetChecks, pageSetMarkdown } from './page-set-report.js';
import { BROWSERLESS_VERSION, browserlessContender, startBrowserless, type BrowserlessHandle } from './browserless.js';
import { launchFloor, serviceContender, type Contender, type Floor, type SetPage } from './page-set-shots.js';
import { settledPss } from './proc-mem.js';
import type { PageSetPage, PageSetResults } from './results.js';
import { cleanups, log, runCleanups } from './run-log.js';
import { startService, type ServiceHandle } from './service.js';
import { OUT_DIR, PAGE_SET_SETTINGS, PAGE_SET_TARGETS, SETTINGS } from './settings.js';
import { round, sleep } from './stats.js';
import { runWhenInvokedDirectly } from './standalone.js';

export const PAGE_SET: readonly SetPage[] = [
  { name: 'text', path: '/set/text.html', fullPage: false },
  { name: 'pictures', path: '/realistic.html', fullPage: false },
  { name: 'photo', path: '/set/photo.html', fullPage: false },
  { name: 'charts', path: '/set/charts.html', fullPage: false },
  { name: 'long', path: '/set/long.html', fullPage: true },
  { name: 'heise', path: '/insight/real/heise.html', fullPage: false },
  { name: 'mozilla', path: '/insight/real/mozilla-1.html', fullPage: false },
  // Many frames: 17 iframes (their sources removed when it was saved), 250 KB of markup.
  { name: 'nytimes', path: '/insight/real/nytimes-1.html', fullPage: false },
  // Plain text, where the PNG encoder's choice shows most (docs/performance.md, "PNG size").
  { name: 'prose-serif', path: '/set/prose-serif.html', fullPage: false },
  { name: 'prose-sans', path: '/set/prose-sans.html', fullPage: false },
  { name: 'plain', path: '/set/plain.html', fullPage: false },
  { name: 'wiki', path: '/set/wiki.html', fullPage: false },
  { name: 'readme', path: '/set/readme.html', fullPage: false },
];

/** The page of the set named by the environment variable `variable` (else `fallback`); an unknown name fails naming the pages. */
export function pageFromEnv(variable: string, fallback: string): SetPage {
  const name = process.env[variable] || fallback;
  const page = PAGE_SET.find((p) => p.name === name);
  if (!page) throw new Error(`${variable}: unknown page ${name}; the pages are ${PAGE_SET.map((p) => p.name).join(', ')}`);
  return page;
}

function selectedPages(): SetPage[] {
  const wanted = PAGE_SET_SETTINGS.pages;
  if (wanted.length === 0) return [...PAGE_SET];
  const unknown = wanted.filter((name) => !PAGE_SET.some((p) => p.name === name));
  if (unknown.length)
    throw new Error(`BENCH_SET_PAGES: unknown page ${unknown.join(', ')}; the pages are ${PAGE_SET.map((p) => p.name).join(', ')}`);
  return PAGE_SET.filter((p) => wanted.includes(p.name));
}

async function measurePage(
  page: SetPage,
  service: Contender,
  floor: Floor,
  fixtures: FixtureServer,
  others: readonly Contender[],
): Promise<PageSetPage> {
  const result: PageSetPage = { page: page.name, path: page.path, fullPage: page.fullPage, notes: [] };
  try {
    log(`page set, ${page.name}: ${PAGE_SET_SETTINGS.n} sequential rounds`);
    const sequential = await sequentialPairs(page, service, floor, fixtures, others);
    result.notes.push(...sequential.notes);
    result.serverTimingP50 = sequential.serverTimingP50;
    result.sequential = {
      service: sequential.service,
      floor: sequential.floor,
      ...(sequential.browserless ? { browserless: sequential.browserless } : {}),
      p50Ratio: round(sequential.service.p50Ms / sequential.floor.p50Ms, 3),
    };
    log(
      `page set, ${page.name}: p50 ${sequential.service.p50Ms} vs ${sequential.floor.p50Ms} ms (${result.sequential.p50Ratio}×), PNG ${sequential.service.pngBytesP50} vs ${sequential.floor.pngBytesP50} B`,
    );
    const plan = concurrentPlan(2 + others.length, PAGE_SET_SETTINGS.c4Requests);
    log(`page set, ${page.name}: ${plan.rounds * plan.perRound} captures each at 4 clients`);
    result.concurrent = await concurrentRounds(page, service, floor, result.notes, others);
    log(
      `page set, ${page.name}: ${result.concurrent.service.perSecond} vs ${result.concurrent.floor.perSecond} captures/s (${result.concurrent.ratio}×)`,
    );
    const lossy = await lossyBytes(page, service, floor, result.notes);
    const png = { service: sequential.service.pngBytesP50, floor: sequential.floor.pngBytesP50 };
    result.bytes = { png: { ...png, ratio: round(png.service / png.floor, 3) }, ...lossy };
  } catch (e) {
    result.error = e instanceof Error ? e.message : String(e);
    log(`page set, ${page.name} failed: ${result.error}`);
  }
  return result;
}

/**
 * What each organization adds to the service's context pool (one warm context and its renderer
 * each, docs/security.md), on a service of its own: the page runs leave the first organization with
 * several warm contexts, which the next organizations would then take over. Service tree PSS after
 * one organization captured once, then after three more did, ÷ 3.
 */
async function memoryPerOrganization(page: SetPage, fixtureOrigin: string): Promise<NonNullable<PageSetResults['memoryPerOrganization']>> {
  const dataDir = await mkdtemp(join(tmpdir(), 'daguerre-bench-set-orgs-'));
  let service: ServiceHandle | undefined;
  try {
    const handle = await startService({ repoRoot: REPO_ROOT, bin: SETTINGS.serviceBin, dataDir, credits: SETTINGS.credits });
    service = handle;
    const keys = [handle.apiKey];
    // One at a time: `org create` makes a plan per credit amount, and two at once would race for it.
    for (const n of [2, 3, 4]) keys.push(await handle.createKey(SETTINGS.credits, `bench page-set organization ${n}`));
    const pssAfter = async (organizationKeys: string[]) => {
      for (const key of organizationKeys) {
        const shot = await serviceContender({ ...handle, apiKey: key }, fixtureOrigin, PAGE_SET_SETTINGS.lossyQuality).shot(page, 'png');
        if (!shot.ok) throw new Error(`organization ${keys.indexOf(key) + 1}: ${shot.error}`);
      }
      // The pool opens a new spare in the background after one is taken: let it finish.
      await sleep(1_500);
      return settledPss(handle.pid);
    };
    const one = await pssAfter(keys.slice(0, 1));
    const four = await pssAfter(keys.slice(1));
    return {
      oneKb: one.totalKb,
      fourKb: four.totalKb,
      perOrganizationMiB: round((four.totalKb - one.totalKb) / 3 / 1024, 1),
      processesOne: one.processes,
      processesFour: four.processes,
    };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  } finally {
    await service?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function measurePageSet(): Promise<{ markdown: string; failures: number; result: PageSetResults }> {
  const pages = selectedPages();
  await mkdir(OUT_DIR, { recursive: true });
  const fixtures = await servePageSetFixtures();
  const dataDir = await mkdtemp(join(tmpdir(), 'daguerre-bench-set-'));
  let service: ServiceHandle | undefined;
  let floor: Floor | undefined;
  let browserless: BrowserlessHandle | undefined;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await floor?.close().catch(() => undefined);
    await browserless?.stop();
    await service?.stop();
    await fixtures.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  cleanups.push(stop);
  try {
    log(`page set: ${pages.map((p) => p.name).join(', ')}; starting the service and the floor browser`);
    service = await startService({ repoRoot: REPO_ROOT, bin: SETTINGS.serviceBin, dataDir, credits: SETTINGS.credits });
    floor = await launchFloor(fixtures.origin, PAGE_SET_SETTINGS.lossyQuality);
    const floorBrowser = floor.version;
    const serviceSide = serviceContender(service, fixtures.origin, PAGE_SET_SETTINGS.lossyQuality);
    // browserless is a comparison, not a target: when it cannot be installed or started, the run goes on and says why.
    let browserlessRun: PageSetResults['browserless'];
    const others: Contender[] = [];
    if (!PAGE_SET_SETTINGS.browserless) {
      browserlessRun = { error: 'BENCH_BROWSERLESS=0' };
      log('page set: browserless left out (BENCH_BROWSERLESS=0)');
    } else {
      try {
        log(`page set: starting browserless ${BROWSERLESS_VERSION} (installed on first use)`);
        browserless = await startBrowserless();
        others.push(browserlessContender(browserless, fixtures.origin, PAGE_SET_SETTINGS.lossyQuality));
        browserlessRun = { version: browserless.version };
      } catch (e) {
        browserlessRun = { error: e instanceof Error ? e.message : String(e) };
        log(`page set: browserless left out: ${browserlessRun.error}`);
      }
    }
    const measured: PageSetPage[] = [];
    for (const page of pages) measured.push(await measurePage(page, serviceSide, floor, fixtures, others));
    // Closed before the memory run, which must not share the machine with them.
    await floor.close();
    floor = undefined;
    await browserless?.stop();
    browserless = undefined;
    await service.stop();
    service = undefined;
    log('page set: memory per organization, on a service of its own');
    const memory = await memoryPerOrganization(pages[0] ?? PAGE_SET[0]!, fixtures.origin);
    const result: PageSetResults = {
      settings: PAGE_SET_SETTINGS,
      targets: PAGE_SET_TARGETS,
      floorBrowser,
      ...(browserlessRun ? { browserless: browserlessRun } : {}),
      pages: measured,
      memoryPerOrganization: memory,
      checks: pageSetChecks(measured),
    };
    return { markdown: pageSetMarkdown(result), failures: result.checks.filter((c) => c.status === 'FAIL').length, result };
  } finally {
    const i = cleanups.indexOf(stop);
    if (i >= 0) cleanups.splice(i, 1);
    await stop();
  }
}

runWhenInvokedDirectly(import.meta.url, async () => {
  try {
    const { markdown, failures, result } = await measurePageSet();
    await writeFile(join(OUT_DIR, 'page-set.md'), `# Daguerre page set — ${new Date().toISOString()}\n\n${markdown}\n`);
    await writeFile(join(OUT_DIR, 'page-set.json'), `${JSON.stringify(result, null, 2)}\n`);
    log(`wrote ${join(OUT_DIR, 'page-set.md')} and page-set.json`);
    return { markdown, failures };
  } finally {
    await runCleanups();
  }
});

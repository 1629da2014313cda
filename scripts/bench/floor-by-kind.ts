/**
 * Where the CPU of a capture goes, the service against the floor, by kind of process
 * (`npm run bench:by-kind`): the service (with its defaults, or BENCH_BY_KIND_SETTINGS) and four
 * kept pages on the headless shell take turns with bursts of 25 captures at 4 clients on one page of
 * the page set. For each: captures/s, the machine's busy CPU a capture, its process tree's CPU a
 * capture by kind (browser, GPU, network, renderers, the service's Node), and the CPU the bench's
 * own process spent for it (the service's HTTP client, or the floor's puppeteer client; the fixture
 * server is in it for both). The page set gives the ratios; this says which process makes them.
 * A process that exits during a burst takes its CPU with it: a renderer replaced meanwhile
 * (RENDERER_REUSE_LIMIT) makes its kind's figure of that side a little low.
 *
 * Environment: BENCH_BY_KIND_PAGE (default mozilla), BENCH_BY_KIND_ROUNDS (8), BENCH_BY_KIND_BURST
 * (25 captures), BENCH_BY_KIND_SETTINGS (`NAME=value NAME=value` for the service).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './make-fixtures.js';
import { servePageSetFixtures } from './page-set-fixtures.js';
import { pageFromEnv } from './page-set.js';
import { burst, costedBurst, LANES } from './page-set-phases.js';
import { launchFloor, serviceContender, type Contender, type Floor, type SetPage } from './page-set-shots.js';
import { log } from './run-log.js';
import { startService, type ServiceHandle } from './service.js';
import { intEnv, PAGE_SET_SETTINGS, SETTINGS, settingsEnv } from './settings.js';
import { round } from './stats.js';
import { runWhenInvokedDirectly } from './standalone.js';

interface Side {
  contender: Contender;
  captures: number;
  ms: number;
  machine: number;
  client: number;
  cpu: Map<string, number>;
}

async function measured(side: Side, page: SetPage, burstSize: number): Promise<void> {
  const cost = await costedBurst(page, side.contender, burstSize);
  side.ms += cost.ms;
  side.machine += cost.machine;
  side.client += cost.client;
  side.captures += burstSize;
  for (const [kind, seconds] of cost.byKind) {
    // A sandboxed renderer is a fork of the zygote and keeps its command line: both are renderers here.
    const as = kind === 'zygote' ? 'renderer' : kind;
    side.cpu.set(as, (side.cpu.get(as) ?? 0) + seconds);
  }
}

function markdown(page: SetPage, sides: Side[], rounds: number, burstSize: number): string {
  const kinds = [...new Set(sides.flatMap((s) => [...s.cpu].filter(([, v]) => v > 0).map(([k]) => k)))].sort();
  const ms = (s: Side, seconds: number) => round((seconds * 1000) / s.captures, 1);
  const tree = (s: Side) => [...s.cpu.values()].reduce((a, b) => a + b, 0);
  return [
    `Page ${page.name}, ${rounds} rounds of ${burstSize} captures at ${LANES} clients a side, taking turns; CPU in ms a capture.`,
    '',
    `| side | captures/s | machine | tree | ${kinds.join(' | ')} | bench process (client, fixtures) |`,
    `|---|---|---|---|${kinds.map(() => '---|').join('')}---|`,
    ...sides.map(
      (s) =>
        `| ${s.contender.name} | ${round((s.captures * 1000) / s.ms, 2)} | ${ms(s, s.machine)} | ${ms(s, tree(s))} | ${kinds.map((k) => ms(s, s.cpu.get(k) ?? 0)).join(' | ')} | ${ms(s, s.client)} |`,
    ),
  ].join('\n');
}

export async function cpuByKind(): Promise<{ markdown: string; failures: number }> {
  const page = pageFromEnv('BENCH_BY_KIND_PAGE', 'mozilla');
  const rounds = intEnv('BENCH_BY_KIND_ROUNDS', 8, 1, 1_000);
  const burstSize = intEnv('BENCH_BY_KIND_BURST', 25, 1, 10_000);
  const env = settingsEnv('BENCH_BY_KIND_SETTINGS');
  const fixtures = await servePageSetFixtures();
  const dataDir = await mkdtemp(join(tmpdir(), 'daguerre-bench-by-kind-'));
  let service: ServiceHandle | undefined;
  let floor: Floor | undefined;
  try {
    log(`CPU by kind: starting the service (${JSON.stringify(env)}) and the floor`);
    service = await startService({ repoRoot: REPO_ROOT, bin: SETTINGS.serviceBin, dataDir, credits: SETTINGS.credits, env });
    floor = await launchFloor(fixtures.origin, PAGE_SET_SETTINGS.lossyQuality);
    await floor.openLanes(LANES);
    const sides: Side[] = [serviceContender(service, fixtures.origin, PAGE_SET_SETTINGS.lossyQuality), floor].map((contender) => ({
      contender,
      captures: 0,
      ms: 0,
      machine: 0,
      client: 0,
      cpu: new Map(),
    }));
    // Warm-up: every slot and lane has rendered the page before anything is counted.
    for (const side of sides) await burst(page, side.contender, 4 * LANES, () => undefined);
    for (let r = 0; r < rounds; r++) {
      // Each side goes first every other round.
      for (const side of r % 2 === 0 ? sides : [...sides].reverse()) await measured(side, page, burstSize);
      log(`CPU by kind: round ${r + 1} of ${rounds}`);
    }
    return { markdown: markdown(page, sides, rounds, burstSize), failures: 0 };
  } finally {
    // Each step whatever the others did: a service left running would keep its Chromium.
    await floor?.close().catch(() => undefined);
    await service?.stop().catch(() => undefined);
    await fixtures.close().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}

runWhenInvokedDirectly(import.meta.url, cpuByKind);

/**
 * Two settings of the service side by side (`npm run bench:ab`): two services, one with each
 * setting, take turns with bursts of captures at 4 clients on one page of the page set, so that a
 * slow moment of the machine falls on both. Reports captures/s and CPU a capture per kind of process.
 * On these machines two runs of one service move by ±15 %; the two sides of this bench, with the
 * same setting, agreed within about 1 % in CPU a capture and 3 % in captures/s over 8 rounds of 25
 * (heise), which is what telling a change of a few milliseconds of CPU apart needs.
 *
 * Environment: BENCH_AB_A and BENCH_AB_B, the settings of each side as `NAME=value NAME=value`
 * (empty: the defaults); BENCH_AB_A_CHECKOUT and BENCH_AB_B_CHECKOUT, another checkout whose
 * service that side runs instead of this one's (two commits side by side: `git worktree add
 * /tmp/base <commit>` and a node_modules link to this checkout's); BENCH_AB_PAGE, a page of the page
 * set (default heise); BENCH_AB_ROUNDS (10) and BENCH_AB_BURST (25 captures); BENCH_AB_ORGS (1), the
 * organizations whose keys the captures take turns with.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { REPO_ROOT } from './make-fixtures.js';
import { servePageSetFixtures } from './page-set-fixtures.js';
import { pageFromEnv } from './page-set.js';
import { costedBurst, LANES } from './page-set-phases.js';
import { serviceContender, type Contender, type SetPage } from './page-set-shots.js';
import { log } from './run-log.js';
import { startService, type ServiceHandle } from './service.js';
import { PAGE_SET_SETTINGS, SETTINGS, settingsEnv } from './settings.js';
import { round } from './stats.js';
import { runWhenInvokedDirectly } from './standalone.js';

interface Side {
  label: 'A' | 'B';
  settings: Record<string, string>;
  /** The checkout whose service this side runs (BENCH_AB_A_CHECKOUT, BENCH_AB_B_CHECKOUT); this one's when unset. */
  checkout?: string;
  service: ServiceHandle;
  contender: Contender;
  captures: number;
  ms: number;
  cpu: Map<string, number>;
  /** The machine's busy CPU-seconds during this side's bursts (the bench's clients and fixture server, the kernel). */
  machine: number;
}

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: a whole number of at least 1, got ${process.env[name]}`);
  return value;
}

async function measured(side: Side, page: SetPage, count: number): Promise<void> {
  const cost = await costedBurst(page, side.contender, count, `side ${side.label}`);
  side.ms += cost.ms;
  side.machine += cost.machine;
  side.captures += count;
  for (const [kind, seconds] of cost.byKind) side.cpu.set(kind, (side.cpu.get(kind) ?? 0) + seconds);
}

function markdown(page: SetPage, sides: Side[], rounds: number, burstSize: number, organizations: number): string {
  const kinds = [...new Set(sides.flatMap((s) => [...s.cpu].filter(([, v]) => v > 0).map(([k]) => k)))].sort();
  const perCapture = (s: Side, seconds: number) => round((seconds * 1000) / s.captures, 1);
  const total = (s: Side) => [...s.cpu.values()].reduce((a, b) => a + b, 0);
  const rate = (s: Side) => round((s.captures * 1000) / s.ms, 2);
  const lines = [
    `Page ${page.name}, ${rounds} rounds of ${burstSize} captures at ${LANES} clients a side, taking turns${organizations > 1 ? `, ${organizations} organizations in turn` : ''}.`,
    '',
    `| side | settings | captures/s | machine CPU ms a capture | CPU ms a capture | ${kinds.join(' | ')} |`,
    `|---|---|---|---|---|${kinds.map(() => '---|').join('')}`,
    ...sides.map(
      (s) =>
        `| ${s.label} | ${[...(s.checkout ? [`checkout ${s.checkout}`] : []), ...Object.entries(s.settings).map(([k, v]) => `${k}=${v}`)].join(' ') || 'defaults'} | ${rate(s)} | ${perCapture(s, s.machine)} | ${perCapture(s, total(s))} | ${kinds.map((k) => perCapture(s, s.cpu.get(k) ?? 0)).join(' | ')} |`,
    ),
    '',
    `B ÷ A: captures/s ${round(rate(sides[1]!) / rate(sides[0]!), 3)}×, CPU a capture ${round(total(sides[1]!) / sides[1]!.captures / (total(sides[0]!) / sides[0]!.captures), 3)}×, machine CPU a capture ${round(sides[1]!.machine / sides[1]!.captures / (sides[0]!.machine / sides[0]!.captures), 3)}×.`,
  ];
  return lines.join('\n');
}

export async function compareSettings(): Promise<{ markdown: string; failures: number }> {
  const page = pageFromEnv('BENCH_AB_PAGE', 'heise');
  const rounds = positive('BENCH_AB_ROUNDS', 10);
  const burstSize = positive('BENCH_AB_BURST', 25);
  const organizations = positive('BENCH_AB_ORGS', 1);
  const settings = { A: settingsEnv('BENCH_AB_A'), B: settingsEnv('BENCH_AB_B') };
  const fixtures = await servePageSetFixtures();
  const dirs: string[] = [];
  const sides: Side[] = [];
  try {
    for (const label of ['A', 'B'] as const) {
      const dataDir = await mkdtemp(join(tmpdir(), `daguerre-bench-ab-${label}-`));
      dirs.push(dataDir);
      const checkout = process.env[`BENCH_AB_${label}_CHECKOUT`] || undefined;
      const where = checkout
        ? { repoRoot: checkout, bin: join(checkout, relative(REPO_ROOT, resolve(REPO_ROOT, SETTINGS.serviceBin))) }
        : { repoRoot: REPO_ROOT, bin: SETTINGS.serviceBin };
      log(`settings A/B: starting side ${label} (${JSON.stringify(settings[label])}${checkout ? ` from ${checkout}` : ''})`);
      const service = await startService({ ...where, dataDir, credits: SETTINGS.credits, env: settings[label] });
      // One at a time: `org create` makes a plan per credit amount, and two at once would race for it.
      const keys = [service.apiKey];
      for (let n = 2; n <= organizations; n++) keys.push(await service.createKey(SETTINGS.credits, `bench organization ${n}`));
      const contender = serviceContender(service, fixtures.origin, PAGE_SET_SETTINGS.lossyQuality, keys);
      sides.push({
        label,
        settings: settings[label],
        ...(checkout ? { checkout } : {}),
        service,
        contender,
        captures: 0,
        ms: 0,
        cpu: new Map(),
        machine: 0,
      });
    }
    // Warm-up: every slot of each side has rendered the page before anything is counted.
    for (const side of sides) await costedBurst(page, side.contender, 4 * LANES, `side ${side.label}`);
    for (let r = 0; r < rounds; r++) {
      // Each side goes first every other round.
      for (const side of r % 2 === 0 ? sides : [...sides].reverse()) await measured(side, page, burstSize);
      log(`settings A/B: round ${r + 1} of ${rounds}`);
    }
    return { markdown: markdown(page, sides, rounds, burstSize, organizations), failures: 0 };
  } finally {
    for (const side of sides) await side.service.stop();
    await fixtures.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

runWhenInvokedDirectly(import.meta.url, compareSettings);

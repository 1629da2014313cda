/**
 * The measurements of one page of the page set (docs/performance.md), service against floor (and
 * browserless, when it runs) in one process:
 *   - sequential: a capture by each contender a round, the order changing from round to round
 *     (every order in turn: orderOfRound), so that the machine's noise (another developer
 *     benchmarking on the same 2 cores) and what one contender leaves behind fall on all alike;
 *     p50/p95, CPU-s per capture of each process tree over the whole run, the machine's busy
 *     CPU-s during each contender's own turns, peak PSS of each tree;
 *   - 4 clients: the service with 4 request loops, the floor with 4 kept pages (browserless with 4
 *     request loops), in rounds ordered the same way; captures per second, CPU-s per capture, peak PSS;
 *   - bytes: PNG from the sequential run, JPEG and WebP at the same quality from a few captures.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FixtureServer } from './fixture-server.js';
import type { Contender, Floor, SetPage, Shot, ShotFormat } from './page-set-shots.js';
import { machineBusySeconds, treeCpuSeconds, treeCpuSecondsByKind } from './proc-cpu.js';
import { processTree, PssSampler, stillRunning, type ProcInfo } from './proc-mem.js';
import type { SetBytes, SetConcurrent, SetSequential } from './results.js';
import { OUT_DIR, PAGE_SET_SETTINGS } from './settings.js';
import { serverTimingP50 } from './server-timing.js';
import { percentile, round, sleep } from './stats.js';

/** Reading smaps_rollup of every process costs CPU on the same cores: twice a second is enough for a peak. */
const PSS_INTERVAL_MS = 500;
export const LANES = 4;

/** One contender's run: samples, CPU over the run and peak PSS of its tree. */
class Tally {
  readonly ms: number[] = [];
  readonly bytes: number[] = [];
  errors = 0;
  firstError = '';
  private readonly cpuStart: number;
  /** The root's children at the start: when one exits (a recycled browser), what its helpers used leaves the tree's count. */
  private readonly children: ProcInfo[];
  private readonly sampler: PssSampler;
  constructor(private readonly contender: Contender) {
    this.cpuStart = treeCpuSeconds(contender.pid);
    this.children = processTree(contender.pid).filter((p) => p.ppid === contender.pid);
    this.sampler = new PssSampler(contender.pid, PSS_INTERVAL_MS);
    this.sampler.start();
  }
  add(shot: Shot): void {
    if (shot.ok) {
      this.ms.push(shot.ms);
      this.bytes.push(shot.bytes.length);
    } else {
      this.errors++;
      this.firstError ||= `${this.contender.name}: ${shot.error ?? 'failed'}`;
    }
  }
  /**
   * CPU-seconds per capture (failed ones included: they cost too) and the peak PSS. The tree's CPU
   * is null when a child of the root that ran at the start exited (the service recycles its browser
   * every BROWSER_RECYCLE_AFTER captures): the browser's helpers are then adopted by init, and what
   * they used leaves the count (the machine's CPU still holds it).
   */
  finish(): { cpuSecondsPerCapture: number | null; peakPssKb: number } {
    const captures = this.ms.length + this.errors;
    const cpu = treeCpuSeconds(this.contender.pid) - this.cpuStart;
    const lost = cpu < 0 || this.children.some((child) => !stillRunning(child));
    return { cpuSecondsPerCapture: lost ? null : round(cpu / Math.max(1, captures), 3), peakPssKb: this.sampler.stop().peakKb };
  }
  /** Stops the PSS sampler when a run ends early (its timer would keep the process alive). */
  close(): void {
    this.sampler.stop();
  }
}

type Name = Contender['name'];

/** Adds `x` to `name`'s sum in `sums`. */
function addTo(sums: Map<Name, number>, name: Name, x: number): void {
  sums.set(name, (sums.get(name) ?? 0) + x);
}

/** A tally for each contender, closed whatever happens in `run`. */
async function withTallies<T>(contenders: readonly Contender[], run: (t: Map<Name, Tally>) => Promise<T>): Promise<T> {
  const tallies = new Map(contenders.map((c) => [c.name, new Tally(c)] as const));
  try {
    return await run(tallies);
  } finally {
    for (const tally of tallies.values()) tally.close();
  }
}

/** How often, and how long at most, quietTree looks. */
const QUIET_STEP_MS = 30;
const QUIET_MAX_MS = 2_000;

/**
 * Waits until the tree under `pid` has used no CPU for two looks in a row (its clock ticks are 10
 * ms): the service answers before its reset is done, and a kept page's browser may still be busy
 * after its screenshot. Each sequential turn then starts on a machine the others have left alone;
 * without this, the floor's turn right after the service's answer shared the cores with the
 * service's reset (mozilla, 1 s between turns or none: floor 117 or 130 ms).
 */
async function quietTree(pid: number): Promise<void> {
  let last = treeCpuSeconds(pid);
  let still = 0;
  // Bounded: QUIET_MAX_MS at most.
  for (let waited = 0; waited < QUIET_MAX_MS && still < 2; waited += QUIET_STEP_MS) {
    await sleep(QUIET_STEP_MS);
    const now = treeCpuSeconds(pid);
    still = now === last ? still + 1 : 0;
    last = now;
  }
}

/** After a contender's turn: its own settling (browserless's closing browsers) and a quiet tree; a note when it gave up waiting. */
async function settled(contender: Contender, notes: string[]): Promise<void> {
  const late = await contender.settle?.();
  if (late && !notes.includes(late)) notes.push(late);
  await quietTree(contender.pid);
}

/** Every order of `items`. */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

/**
 * The contenders in the order of round `i`: every order in turn, so that within the rounds each
 * follows each other equally often (browserless's closing browser must not always weigh on the
 * same one). Two contenders: A B, B A, A B, …
 */
export function orderOfRound<T>(contenders: readonly T[], i: number): T[] {
  const orders = permutations(contenders);
  return orders[i % orders.length]!;
}

/** Rounds at 4 clients (one a contender order) and captures a round (whole laps of the 4 loops, at least 2) for at least `c4Requests` captures a contender. */
export function concurrentPlan(contenderCount: number, c4Requests: number): { rounds: number; perRound: number } {
  const rounds = permutations(Array.from({ length: contenderCount }, (_, i) => i)).length;
  const perRound = Math.max(2 * LANES, Math.ceil(c4Requests / rounds / LANES) * LANES);
  return { rounds, perRound };
}

/** The paths a capture fetched from the fixture server, sorted. */
async function fetched(fixtures: FixtureServer, capture: () => Promise<Shot>): Promise<{ shot: Shot; paths: string[] }> {
  fixtures.resetCounts();
  const shot = await capture();
  return { shot, paths: [...fixtures.counts.keys()].sort() };
}

export interface SequentialOutcome {
  service: SetSequential;
  floor: SetSequential;
  browserless?: SetSequential;
  serverTimingP50: Record<string, number>;
  notes: string[];
}

/** `others`: more contenders (browserless), each with a turn a round. */
export async function sequentialPairs(
  page: SetPage,
  service: Contender,
  floor: Contender,
  fixtures: FixtureServer,
  others: readonly Contender[] = [],
): Promise<SequentialOutcome> {
  const notes: string[] = [];
  const contenders = [service, floor, ...others];
  for (let i = 0; i < PAGE_SET_SETTINGS.warmup; i++) {
    const first = await fetched(fixtures, () => service.shot(page, 'png'));
    for (const contender of contenders.slice(1)) {
      const other = await fetched(fixtures, () => contender.shot(page, 'png'));
      await settled(contender, notes);
      if (i > 0) continue;
      // All must do the same work: a resource only one of them fetched would skew every figure.
      if (first.paths.join() !== other.paths.join())
        notes.push(
          `fetched different resources: service ${first.paths.length} (${first.paths.join(' ')}), ${contender.name} ${other.paths.length} (${other.paths.join(' ')})`,
        );
      if (other.shot.ok) await writeFile(join(OUT_DIR, `set-${page.name}-${contender.name}.png`), other.shot.bytes);
    }
    if (i === 0 && first.shot.ok) await writeFile(join(OUT_DIR, `set-${page.name}.png`), first.shot.bytes);
  }
  const timings: string[] = [];
  // The machine's busy CPU during each contender's own turns (settling included): browserless's
  // browsers leave its process tree, so its tree's CPU falls short.
  const machine = new Map<Name, number>();
  return withTallies(contenders, async (tallies) => {
    for (let i = 0; i < PAGE_SET_SETTINGS.n; i++)
      for (const contender of orderOfRound(contenders, i)) {
        const busy = machineBusySeconds();
        const shot = await contender.shot(page, 'png');
        await settled(contender, notes);
        addTo(machine, contender.name, machineBusySeconds() - busy);
        tallies.get(contender.name)!.add(shot);
        if (contender === service && shot.ok && shot.serverTiming) timings.push(shot.serverTiming);
      }
    // The service may still be resetting its page after the last response: count that CPU too.
    await sleep(200);
    const summary = (name: Name): SetSequential => {
      const t = tallies.get(name)!;
      if (t.firstError) notes.push(t.firstError);
      return {
        ok: t.ms.length,
        errors: t.errors,
        p50Ms: round(percentile(t.ms, 50)),
        p95Ms: round(percentile(t.ms, 95)),
        ...t.finish(),
        machineCpuSecondsPerCapture: round((machine.get(name) ?? 0) / Math.max(1, t.ms.length + t.errors), 3),
        pngBytesP50: percentile(t.bytes, 50),
      };
    };
    return {
      service: summary('service'),
      floor: summary('floor'),
      ...(tallies.has('browserless') ? { browserless: summary('browserless') } : {}),
      serverTimingP50: serverTimingP50(timings),
      notes,
    };
  });
}

/** `requests` captures by 4 loops at once, each shot handed to `record`; returns the wall time. */
export async function burst(page: SetPage, contender: Contender, requests: number, record: (shot: Shot) => void): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: LANES }, async (_, lane) => {
      // Bounded: `next` only grows.
      while (next < requests) {
        next++;
        record(await contender.shot(page, 'png', lane));
      }
    }),
  );
  return performance.now() - start;
}

/** What a burst cost: its wall ms, the machine's busy CPU-s, the bench process's own CPU-s (clients, fixture server) and the contender's process tree's CPU-s by kind of process. */
export interface BurstCost {
  ms: number;
  machine: number;
  client: number;
  byKind: Map<string, number>;
}

/** A burst (above) and what it cost; fails, naming `label` and the first failed capture, once it is done. */
export async function costedBurst(
  page: SetPage,
  contender: Contender,
  requests: number,
  label: string = contender.name,
): Promise<BurstCost> {
  const before = treeCpuSecondsByKind(contender.pid);
  const busy = machineBusySeconds();
  const client = process.cpuUsage();
  let failure: string | undefined;
  const ms = await burst(page, contender, requests, (shot) => {
    if (!shot.ok) failure ??= shot.error ?? 'failed';
  });
  if (failure !== undefined) throw new Error(`${label}: ${failure}`);
  const spent = process.cpuUsage(client);
  const byKind = new Map<string, number>();
  for (const [kind, seconds] of treeCpuSecondsByKind(contender.pid)) byKind.set(kind, seconds - (before.get(kind) ?? 0));
  return { ms, machine: machineBusySeconds() - busy, client: (spent.user + spent.system) / 1e6, byKind };
}

/** `others`: more contenders (browserless), each with 4 request loops, in rounds ordered as the sequential ones. */
export async function concurrentRounds(
  page: SetPage,
  service: Contender,
  floor: Floor,
  notes: string[],
  others: readonly Contender[] = [],
): Promise<{ service: SetConcurrent; floor: SetConcurrent; browserless?: SetConcurrent; ratio: number }> {
  const contenders = [service, floor, ...others];
  await floor.openLanes(LANES);
  try {
    // Warm-up: one capture per lane, so that every floor page and every service slot has run the page once.
    for (const contender of contenders) {
      await burst(page, contender, LANES, () => undefined);
      await settled(contender, notes);
    }
    const { rounds, perRound } = concurrentPlan(contenders.length, PAGE_SET_SETTINGS.c4Requests);
    const wall = new Map<Name, number>();
    // The machine's busy CPU during each contender's own rounds: both are CPU-bound on two cores,
    // and this also counts their clients, the fixture server and the kernel's part.
    const machine = new Map<Name, number>();
    return await withTallies(contenders, async (tallies) => {
      for (let r = 0; r < rounds; r++)
        for (const contender of orderOfRound(contenders, r)) {
          const busy = machineBusySeconds();
          addTo(wall, contender.name, await burst(page, contender, perRound, (shot) => tallies.get(contender.name)!.add(shot)));
          // Inside its machine CPU, outside its wall time: the service's resets after its last answers are its own.
          await settled(contender, notes);
          addTo(machine, contender.name, machineBusySeconds() - busy);
        }
      await sleep(200);
      const summary = (name: Name): SetConcurrent => {
        const t = tallies.get(name)!;
        if (t.firstError) notes.push(`4 clients: ${t.firstError}`);
        const captures = Math.max(1, t.ms.length + t.errors);
        return {
          ok: t.ms.length,
          errors: t.errors,
          perSecond: round((t.ms.length * 1000) / wall.get(name)!, 2),
          ...t.finish(),
          machineCpuSecondsPerCapture: round(machine.get(name)! / captures, 3),
        };
      };
      const s = summary('service');
      const f = summary('floor');
      return {
        service: s,
        floor: f,
        ...(tallies.has('browserless') ? { browserless: summary('browserless') } : {}),
        ratio: round(s.perSecond / f.perSecond, 2),
      };
    });
  } finally {
    await floor.closeLanes();
  }
}

/** JPEG and WebP sizes, a few captures of each, alternating; PNG from the sequential medians. */
export async function lossyBytes(
  page: SetPage,
  service: Contender,
  floor: Contender,
  notes: string[],
): Promise<Record<'jpeg' | 'webp', SetBytes>> {
  const out = {} as Record<'jpeg' | 'webp', SetBytes>;
  for (const format of ['jpeg', 'webp'] as const satisfies readonly ShotFormat[]) {
    const sizes = { service: [] as number[], floor: [] as number[] };
    for (let i = 0; i < PAGE_SET_SETTINGS.bytesN; i++)
      for (const [side, contender] of [
        ['service', service],
        ['floor', floor],
      ] as const) {
        const shot = await contender.shot(page, format);
        if (shot.ok) sizes[side].push(shot.bytes.length);
        else notes.push(`${format}, ${contender.name}: ${shot.error ?? 'failed'}`);
      }
    const s = percentile(sizes.service, 50);
    const f = percentile(sizes.floor, 50);
    out[format] = { service: s, floor: f, ratio: round(s / f, 3) };
  }
  return out;
}

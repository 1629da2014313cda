import { readdirSync, readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { CaptureError } from '../capture-error.js';
import type { MemoryCgroups } from './renderer-memory-cgroup.js';

/**
 * Holds every child process of the service's Chromium to a memory limit (docs/containment.md), so
 * that one page cannot take the host's memory. V8's heap cap (RENDERER_MAX_HEAP_MB) covers the JS
 * heap only; ArrayBuffers, canvases, decoded images and the raster and shared memory a page causes
 * live outside it. Where the kernel can, each process also gets a memory cgroup that holds it at
 * the limit (renderer-memory-cgroup.ts); this watchdog is what ends it, and the whole enforcement
 * where the kernel cannot (cgroup v2 only, no delegated controller, not root). Every `intervalMs`
 * it reads the resident size of each Chromium child process from /proc (statm, one small read), and
 * only for a process whose resident size is past the limit it reads its proportional size
 * (smaps_rollup: PSS, shared pages split among the processes that map them, plus the PSS of what is
 * swapped out). A process past the limit, or waiting at its cgroup's limit, is ended with SIGKILL
 * at once; the capture on that renderer then fails with PAGE_MEMORY_LIMIT (renderer.ts asks
 * claim()).
 *
 * Counted per process: its private memory (JS heap, ArrayBuffer backing stores, canvas and image
 * bitmaps, Skia's software raster, malloc and PartitionAlloc), its share of shared memory (the
 * shared-memory regions it exchanges with the browser and GPU processes, tiles, transport buffers)
 * and its share of mapped files. Watched: renderers, and the GPU and utility processes too (a page
 * can make them grow: a crossing there ends that process, Chromium starts a new one, and no single
 * capture is blamed). The browser process itself is not ended: it holds every organization's work.
 */

export interface RendererMemoryWatchdogOptions {
  /** The limit of one process, in bytes (RENDERER_MEMORY_LIMIT_MB). */
  limitBytes: number;
  /** The pids of the Chromium browser processes whose descendants are watched (BrowserManager.pids()). */
  roots: () => number[];
  /** Time between two samples; the renderer is ended at most about this long after crossing (plus the kill). */
  intervalMs?: number;
  logger: Logger;
  /** Read /proc from elsewhere (tests); default /proc. */
  procRoot?: string;
  /** The kernel's hold at the limit, where it can take one (renderer-memory-cgroup.ts). */
  cgroups?: MemoryCgroups;
}

/** A process the watchdog ended. */
export interface MemoryKill {
  pid: number;
  /** Chromium's process type (`renderer`, `gpu-process`, `utility`, …). */
  type: string;
  /** Its proportional size when it was ended, in bytes. */
  usedBytes: number;
  /** Epoch ms of the kill. */
  at: number;
  /** Set once a capture took the kill as its own (claim()). */
  claimed: boolean;
}

/** A kill is blamed on a page crash that follows it within this long (the crash event takes milliseconds). */
const CLAIM_WINDOW_MS = 5_000;
const PAGE_SIZE = 4096;

interface Known {
  ppid: number;
}

export class RendererMemoryWatchdog {
  private timer: NodeJS.Timeout | undefined;
  /** ppid of each pid seen in /proc, read once per process (a process's parent only changes when it is orphaned). */
  private readonly known = new Map<number, Known>();
  private readonly kills: MemoryKill[] = [];
  /** Processes the kernel refused a cgroup to: not asked again. */
  private readonly unconfinable = new Set<number>();
  private readonly proc: string;
  /** Processes ended since start. */
  killCount = 0;

  constructor(private readonly options: RendererMemoryWatchdogOptions) {
    this.proc = options.procRoot ?? '/proc';
  }

  get limitBytes(): number {
    return this.options.limitBytes;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sample(), this.options.intervalMs ?? 50);
    // The watchdog never keeps the service alive on its own.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Removes the cgroups (once Chromium is gone). */
  close(): void {
    this.stop();
    this.options.cgroups?.close();
  }

  /**
   * The most recent renderer kill of the last few seconds that no capture has taken yet. A renderer
   * serves one browser context only (one organization's page), so a page that crashed right after
   * the watchdog ended a renderer is the page of that renderer.
   */
  claim(now = Date.now()): MemoryKill | undefined {
    for (let i = this.kills.length - 1; i >= 0; i--) {
      const kill = this.kills[i]!;
      if (now - kill.at > CLAIM_WINDOW_MS) break;
      if (!kill.claimed && kill.type === 'renderer') {
        kill.claimed = true;
        return kill;
      }
    }
    return undefined;
  }

  /** The last kills, oldest first (for the operator's view and tests). */
  recentKills(): readonly MemoryKill[] {
    return this.kills;
  }

  /** Whether the kernel holds the watched processes at the limit too (a memory cgroup each). */
  get kernelHold(): boolean {
    return this.options.cgroups !== undefined;
  }

  /** One pass: find the watched processes, measure them, end those past the limit. Returns the kills made. */
  sample(): MemoryKill[] {
    const roots = this.options.roots();
    const cgroups = this.options.cgroups;
    if (roots.length === 0) {
      cgroups?.forget(new Set());
      return [];
    }
    const made: MemoryKill[] = [];
    const watched = this.descendants(roots);
    const limit = this.options.limitBytes;
    for (const pid of watched) {
      if (cgroups && !cgroups.has(pid) && !this.unconfinable.has(pid)) this.confine(pid, cgroups);
      const resident = this.residentBytes(pid);
      if (resident === undefined) continue;
      // Held by the kernel at its cgroup's limit (which is this limit): over it, whatever PSS says.
      const held = cgroups !== undefined && resident > limit / 2 && cgroups.atLimit(pid);
      if (!held && resident <= limit) continue;
      const used = this.proportionalBytes(pid) ?? resident;
      if (!held && used <= limit) continue;
      const kill = this.end(pid, used);
      if (kill) made.push(kill);
    }
    cgroups?.forget(new Set(watched));
    return made;
  }

  /**
   * Gives a renderer, GPU or utility process a cgroup that lets it grow to the limit from its size
   * now. A zygote is left where it is: every renderer it forks would start in its cgroup. A process
   * just forked by the zygote still has the zygote's command line: it is looked at again next pass.
   */
  private confine(pid: number, cgroups: MemoryCgroups): void {
    const type = this.typeOf(pid);
    if (type === 'zygote' || type === 'unknown') return;
    const now = this.proportionalBytes(pid) ?? this.residentBytes(pid) ?? 0;
    cgroups.confine(pid, this.options.limitBytes - now, () => this.unconfinable.add(pid));
  }

  private end(pid: number, usedBytes: number): MemoryKill | undefined {
    const type = this.typeOf(pid);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return undefined; // Gone already.
    }
    const kill: MemoryKill = { pid, type, usedBytes, at: Date.now(), claimed: false };
    this.kills.push(kill);
    while (this.kills.length > 64) this.kills.shift();
    this.killCount += 1;
    this.options.logger.warn(
      { pid, type, usedMb: Math.round(usedBytes / 1024 ** 2), limitMb: Math.round(this.options.limitBytes / 1024 ** 2) },
      'chromium process over RENDERER_MEMORY_LIMIT_MB: ended',
    );
    return kill;
  }

  /** Every live descendant of the roots, from a pid → parent table refreshed with the pids now in /proc. */
  private descendants(roots: number[]): number[] {
    let names: string[];
    try {
      names = readdirSync(this.proc);
    } catch {
      return [];
    }
    const present = new Set<number>();
    for (const name of names) {
      const first = name.charCodeAt(0);
      if (first < 48 || first > 57) continue;
      const pid = Number(name);
      present.add(pid);
      if (!this.known.has(pid)) {
        const stat = this.readStat(pid);
        if (stat) this.known.set(pid, stat);
      }
    }
    for (const pid of this.known.keys()) if (!present.has(pid)) this.known.delete(pid);
    const children = new Map<number, number[]>();
    for (const [pid, { ppid }] of this.known) {
      const list = children.get(ppid);
      if (list) list.push(pid);
      else children.set(ppid, [pid]);
    }
    const found: number[] = [];
    const queue = [...roots];
    while (queue.length > 0) {
      for (const child of children.get(queue.pop()!) ?? []) {
        found.push(child);
        queue.push(child);
      }
    }
    return found;
  }

  private readStat(pid: number): Known | undefined {
    try {
      const stat = readFileSync(`${this.proc}/${pid}/stat`, 'utf8');
      // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return { ppid: Number(fields[1]) };
    } catch {
      return undefined;
    }
  }

  private residentBytes(pid: number): number | undefined {
    try {
      return Number(readFileSync(`${this.proc}/${pid}/statm`, 'utf8').split(' ')[1]) * PAGE_SIZE;
    } catch {
      return undefined;
    }
  }

  /** PSS plus swapped-out PSS, from smaps_rollup (one summary of all the process's mappings). */
  private proportionalBytes(pid: number): number | undefined {
    try {
      const rollup = readFileSync(`${this.proc}/${pid}/smaps_rollup`, 'utf8');
      const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0);
      return (kb('Pss') + kb('SwapPss')) * 1024;
    } catch {
      return undefined;
    }
  }

  private typeOf(pid: number): string {
    try {
      const cmdline = readFileSync(`${this.proc}/${pid}/cmdline`, 'utf8');
      return /--type=([\w-]+)/.exec(cmdline)?.[1] ?? 'unknown';
    } catch {
      return 'unknown';
    }
  }
}

/** The capture's answer when the watchdog ended its renderer: the limit, and that nothing was charged. */
export function pageMemoryLimit(limitBytes: number): CaptureError {
  const limitMb = Math.round(limitBytes / 1024 ** 2);
  return new CaptureError(
    'over-memory',
    `The page used more memory than a capture may (${limitMb} MB per renderer process: JavaScript heap, ArrayBuffers, canvases, images and raster memory together); its renderer was ended and nothing was charged`,
    { details: { limitMb } },
  );
}

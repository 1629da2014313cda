/**
 * Memory of a process tree from /proc (Linux): PSS of a root process and all its descendants.
 * PSS (proportional set size) shares each shared page among the processes that map it, so the sum
 * over a tree counts Chromium's shared libraries and shared memory once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseProcStat, pssKbOfSmapsRollup, treeOf, type ProcInfo } from './proc-parse.js';

export type { ProcInfo };

export function readProc(pid: number): ProcInfo | undefined {
  try {
    return parseProcStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Every process on the machine (those that exit while /proc is read are left out). */
export function allProcesses(): ProcInfo[] {
  const all: ProcInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const info = readProc(Number(name));
    if (info) all.push(info);
  }
  return all;
}

/** The root (if alive) and all its descendants, found by walking the ppid links of /proc/*\/stat. */
export function processTree(rootPid: number): ProcInfo[] {
  return treeOf(allProcesses(), rootPid);
}

/** Whether the process recorded in `p` still runs (same pid, same start time, not a zombie). */
export function stillRunning(p: ProcInfo): boolean {
  const now = readProc(p.pid);
  return now !== undefined && now.startTime === p.startTime && now.state !== 'Z';
}

/** The `Pss:` line of /proc/<pid>/smaps_rollup in kB, or undefined when the process is gone. */
export function pssKb(pid: number): number | undefined {
  try {
    return pssKbOfSmapsRollup(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  } catch {
    return undefined;
  }
}

export interface TreePss {
  totalKb: number;
  processes: number;
}

export function treePss(rootPid: number): TreePss {
  let totalKb = 0;
  let processes = 0;
  for (const p of processTree(rootPid)) {
    const kb = pssKb(p.pid);
    if (kb === undefined) continue;
    totalKb += kb;
    processes++;
  }
  return { totalKb, processes };
}

/** Samples the tree's PSS every `intervalMs` until stopped; reports the peak and the samples. */
export class PssSampler {
  private timer: NodeJS.Timeout | undefined;
  readonly samples: TreePss[] = [];
  constructor(
    private readonly rootPid: number,
    private readonly intervalMs = 250,
  ) {}
  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
  }
  private sample(): void {
    const s = treePss(this.rootPid);
    if (s.processes > 0) this.samples.push(s);
  }
  stop(): { peakKb: number; peakProcesses: number; samples: number } {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
    let peak: TreePss = { totalKb: 0, processes: 0 };
    for (const s of this.samples) if (s.totalKb > peak.totalKb) peak = s;
    return { peakKb: peak.totalKb, peakProcesses: peak.processes, samples: this.samples.length };
  }
}

/** Mean PSS of the tree over `count` samples `intervalMs` apart (a steadier figure than one sample). */
export async function settledPss(rootPid: number, count = 4, intervalMs = 250): Promise<TreePss> {
  let total = 0;
  let processes = 0;
  for (let i = 0; i < count; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, intervalMs));
    const s = treePss(rootPid);
    total += s.totalKb;
    processes = Math.max(processes, s.processes);
  }
  return { totalKb: Math.round(total / count), processes };
}

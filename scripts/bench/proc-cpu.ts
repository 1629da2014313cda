/**
 * CPU time of a process tree from /proc (Linux): user + system time of a root process and all its
 * descendants, including what their exited and reaped children used (cutime/cstime). On two cores
 * CPU is throughput, so the bench reports CPU-seconds per capture beside the milliseconds.
 */
import { readFileSync } from 'node:fs';
import { processTree } from './proc-mem.js';
import { busyTicksOfProcStat, cpuTicksOfStat, processKindOfCmdline } from './proc-parse.js';

/** Clock ticks per second of /proc/<pid>/stat times: 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

function cpuTicks(pid: number): number {
  try {
    return cpuTicksOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return 0; // gone meanwhile
  }
}

/**
 * CPU-seconds the whole machine has been busy so far (/proc/stat: user, nice, system, irq and
 * softirq of every core; idle, I/O wait and time stolen by the host left out). Over a contender's
 * own rounds it holds what that contender costs besides its process tree: its clients and the
 * fixture server in the bench process, and the kernel's work for them (the loopback network, the
 * DevTools pipe), as well as whatever else runs on the machine then.
 */
export function machineBusySeconds(): number {
  return busyTicksOfProcStat(readFileSync('/proc/stat', 'utf8')) / CLOCK_TICKS;
}

/** CPU-seconds used so far by the tree under rootPid (a process that exits unreaped between two readings is lost: a small undercount). */
export function treeCpuSeconds(rootPid: number): number {
  return processTree(rootPid).reduce((sum, p) => sum + cpuTicks(p.pid), 0) / CLOCK_TICKS;
}

/**
 * What kind of process a pid is: `node` (the service, with its libvips threads), Chromium's
 * `browser`, or its `--type` (a renderer forked by the zygote keeps the zygote's command line, so
 * renderers may count as `zygote`, which also holds what it reaped of its exited renderers).
 */
function processKind(pid: number): string {
  try {
    return processKindOfCmdline(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return 'gone';
  }
}

/** CPU-seconds used so far by the tree under rootPid, per kind of process (processKind). */
export function treeCpuSecondsByKind(rootPid: number): Map<string, number> {
  const byKind = new Map<string, number>();
  for (const p of processTree(rootPid)) {
    const kind = processKind(p.pid);
    byKind.set(kind, (byKind.get(kind) ?? 0) + cpuTicks(p.pid) / CLOCK_TICKS);
  }
  return byKind;
}

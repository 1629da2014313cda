/**
 * CPU time of a process tree from /proc (Linux): user + system time of a root process and all its
 * descendants, including what their exited and reaped children used (cutime/cstime). On two cores
 * CPU is throughput, so the bench reports CPU-seconds per capture beside the milliseconds.
 */
import { readFileSync } from 'node:fs';
import { processTree } from './proc-mem.js';

/** Clock ticks per second of /proc/<pid>/stat times: 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14–17 (utime, stime, cutime, cstime) are rest[11..14].
    return [11, 12, 13, 14].reduce((sum, i) => sum + (Number(rest[i]) || 0), 0);
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
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
  return (user + nice + system + irq + softirq) / CLOCK_TICKS;
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
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    if (/(^|\/)node /.test(cmdline)) return 'node';
    const type = /--type=([\w-]+)/.exec(cmdline)?.[1];
    if (!type) return 'browser';
    return type === 'utility' && cmdline.includes('network.mojom') ? 'network' : type;
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

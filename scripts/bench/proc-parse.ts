/**
 * The text of Linux's /proc files to figures, with no I/O: proc-mem.ts and proc-cpu.ts read the
 * files, these read the text (and tests/unit/bench-proc-parse.test.ts feeds them fixtures).
 * Field numbers are those of proc(5).
 */

export interface ProcInfo {
  pid: number;
  ppid: number;
  /** Start time in clock ticks since boot (field 22 of /proc/<pid>/stat): tells a reused pid apart. */
  startTime: number;
  /** State letter (field 3): R, S, D, Z (zombie: exited, not yet reaped), … */
  state: string;
  comm: string;
}

/** The fields after "pid (comm) ": comm may hold spaces and parentheses, so cut at the last ')'. Field n is [n - 3]. */
function fieldsAfterComm(stat: string): string[] | undefined {
  const close = stat.lastIndexOf(')');
  return close < 0 ? undefined : stat.slice(close + 2).split(' ');
}

/** /proc/<pid>/stat to its pid, parent, start time, state and command name; undefined when it does not parse. */
export function parseProcStat(pid: number, stat: string): ProcInfo | undefined {
  const open = stat.indexOf('(');
  const rest = fieldsAfterComm(stat);
  if (open < 0 || !rest) return undefined;
  const ppid = Number(rest[1]);
  const startTime = Number(rest[19]);
  if (!Number.isFinite(ppid) || !Number.isFinite(startTime)) return undefined;
  return { pid, ppid, startTime, state: rest[0] ?? '?', comm: stat.slice(open + 1, stat.lastIndexOf(')')) };
}

/** Clock ticks of /proc/<pid>/stat's utime + stime + cutime + cstime (fields 14–17): its own CPU and its reaped children's. */
export function cpuTicksOfStat(stat: string): number {
  const rest = fieldsAfterComm(stat) ?? [];
  return [11, 12, 13, 14].reduce((sum, i) => sum + (Number(rest[i]) || 0), 0);
}

/** The `Pss:` line of /proc/<pid>/smaps_rollup in kB, or undefined when there is none. */
export function pssKbOfSmapsRollup(text: string): number | undefined {
  const m = /^Pss:\s+(\d+)\s+kB/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

/**
 * Busy clock ticks of the machine from /proc/stat's first line (the sum over cores): user, nice,
 * system, irq and softirq; idle, I/O wait and time stolen by the host left out.
 */
export function busyTicksOfProcStat(text: string): number {
  const fields = (text.split('\n', 1)[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
  return user + nice + system + irq + softirq;
}

/**
 * What kind of process a command line (NUL-separated, as /proc/<pid>/cmdline) is: `node`,
 * Chromium's `browser`, or its `--type` (`network` for the network service's utility process).
 */
export function processKindOfCmdline(cmdline: string): string {
  const line = cmdline.replaceAll('\0', ' ');
  if (/(^|\/)node /.test(line)) return 'node';
  const type = /--type=([\w-]+)/.exec(line)?.[1];
  if (!type) return 'browser';
  return type === 'utility' && line.includes('network.mojom') ? 'network' : type;
}

/** The root (when among `all`) and all its descendants, parents before children, each once. */
export function treeOf(all: readonly ProcInfo[], rootPid: number): ProcInfo[] {
  const children = new Map<number, ProcInfo[]>();
  for (const p of all) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const root = all.find((p) => p.pid === rootPid);
  if (!root) return [];
  const tree: ProcInfo[] = [root];
  // Bounded: each pid is visited once, and there are finitely many.
  const seen = new Set<number>([rootPid]);
  for (let i = 0; i < tree.length; i++) {
    const node = tree[i];
    if (!node) break;
    for (const child of children.get(node.pid) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      tree.push(child);
    }
  }
  return tree;
}

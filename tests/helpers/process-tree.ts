import { readdirSync, readFileSync } from 'node:fs';

interface ProcInfo {
  pid: number;
  ppid: number;
  rssBytes: number;
  cpuTicks: number;
  cmdline: string;
}

function readProc(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const statm = readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    return { pid, ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]), rssBytes: Number(statm[1]) * 4096, cmdline };
  } catch {
    return undefined;
  }
}

/** Every live descendant of `root` (not `root` itself), read from /proc. */
export function descendantsOf(root: number): ProcInfo[] {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProc(Number(name)))
    .filter((p): p is ProcInfo => p !== undefined);
  const found: ProcInfo[] = [];
  const parents = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        found.push(p);
        grew = true;
      }
    }
  }
  return found;
}

/** Resident memory of a process and all its descendants. */
export function treeRssBytes(root: number): number {
  return (readProc(root)?.rssBytes ?? 0) + descendantsOf(root).reduce((sum, p) => sum + p.rssBytes, 0);
}

/** The renderer under `browserPid` that used the most CPU over `ms` (the one spinning a busy page). */
export async function busiestRenderer(browserPid: number, ms = 600): Promise<number | undefined> {
  const renderers = () => descendantsOf(browserPid).filter((p) => p.cmdline.includes('--type=renderer'));
  const before = new Map(renderers().map((p) => [p.pid, p.cpuTicks]));
  await new Promise((r) => setTimeout(r, ms));
  let best: { pid: number; used: number } | undefined;
  for (const p of renderers()) {
    const used = p.cpuTicks - (before.get(p.pid) ?? p.cpuTicks);
    if (!best || used > best.used) best = { pid: p.pid, used };
  }
  return best && best.used > 0 ? best.pid : undefined;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';

/**
 * The default of MAX_CONCURRENCY: two render slots a core, as long as that many renderers at their
 * memory limit (RENDERER_MEMORY_LIMIT_MB) take at most half of the memory; at least 2, at most 64
 * (the setting's own range).
 *
 * Why two a core: a capture does not keep a core busy all of its time (the page's network, the
 * frame the screenshot waits for, the reset), so one slot a core leaves part of the CPU idle.
 * Measured on two cores with four clients (docs/performance.md): four slots did 1.05–1.09× the
 * captures/s of two, for the same CPU a capture; a kept page per client keeps the cores as busy.
 * Why the memory bound: the containment budget (docs/containment.md) holds each renderer to its
 * limit, and MAX_CONCURRENCY of them at the limit must fit beside Chromium, the service and the
 * system. A 2-core, 4 GB host keeps 2 slots; a 2-core host with 24 GiB gets 4.
 * Both are read as the process's cgroup allows (a container's CPU quota and memory limit, a
 * systemd unit's MemoryMax), cgroup v2 or v1, at its own level and every level above it.
 */
export function defaultConcurrency(rendererMemoryLimitMb: number, host: Host = { cpus: cpuShare(), memoryMb: memoryMb() }): number {
  const byCpu = Math.round(2 * host.cpus);
  const byMemory = Math.floor(host.memoryMb / 2 / rendererMemoryLimitMb);
  return Math.min(MAX_SLOTS, Math.max(2, Math.min(byCpu, byMemory)));
}

/**
 * The default of VIDEO_CONCURRENCY: a video keeps about a core busy for its whole recording (a
 * screenshot a frame, streamed into ffmpeg), so one for every two CPUs, at least one, and always
 * fewer than the render slots when there are two or more: the others stay for everything else.
 */
export function defaultVideoConcurrency(renderSlots: number, cpus = cpuShare()): number {
  return Math.max(1, Math.min(renderSlots - 1, Math.floor(cpus / 2)));
}

/** MAX_CONCURRENCY's upper bound (config.ts). */
const MAX_SLOTS = 64;

export interface Host {
  /** CPUs this process may use; a fraction under a quota of, say, 1.5 CPUs. */
  cpus: number;
  memoryMb: number;
}

/** Reads a file's text, or undefined when it is not there (a test passes its own). */
export type ReadText = (path: string) => string | undefined;

/** CPUs this process may use: the smallest cgroup CPU quota on its path (v2 cpu.max, v1 cfs_quota_us), else the machine's. */
export function cpuShare(read: ReadText = readText, machine = availableParallelism()): number {
  const shares: number[] = [];
  for (const dir of cgroupDirs(read, 'cpu')) {
    const [quota, period] = firstLine(read(`${dir}/cpu.max`))?.split(/\s+/) ?? [
      firstLine(read(`${dir}/cpu.cfs_quota_us`)),
      firstLine(read(`${dir}/cpu.cfs_period_us`)),
    ];
    const share = Number(quota) / Number(period);
    if (Number.isFinite(share) && share > 0) shares.push(share);
  }
  return Math.min(machine, ...shares);
}

/** MiB of memory this process may use: the smallest cgroup limit on its path (v2 memory.max, v1 limit_in_bytes), else the machine's. */
export function memoryMb(read: ReadText = readText, machine = totalmem()): number {
  const limits: number[] = [];
  for (const dir of cgroupDirs(read, 'memory')) {
    const limit = Number(firstLine(read(`${dir}/memory.max`) ?? read(`${dir}/memory.limit_in_bytes`)));
    if (Number.isFinite(limit) && limit > 0) limits.push(limit);
  }
  return Math.min(machine, ...limits) / 1024 ** 2;
}

/**
 * The cgroup directories whose limits apply to this process, its own first, then each parent up
 * to the root: v2's unified hierarchy (`0::/path`) and v1's hierarchy of `controller`.
 */
function cgroupDirs(read: ReadText, controller: 'cpu' | 'memory'): string[] {
  const dirs: string[] = [];
  for (const line of (read('/proc/self/cgroup') ?? '').split('\n')) {
    const [id, controllers, path] = line.split(':');
    if (path === undefined || !path.startsWith('/')) continue;
    const v1 = controllers?.split(',').includes(controller);
    if (id !== '0' && !v1) continue;
    const root =
      id === '0'
        ? read('/sys/fs/cgroup/cgroup.controllers') !== undefined
          ? '/sys/fs/cgroup'
          : '/sys/fs/cgroup/unified'
        : `/sys/fs/cgroup/${controllers}`;
    const parts = path.split('/').filter(Boolean);
    for (let depth = parts.length; depth >= 0; depth--) dirs.push([root, ...parts.slice(0, depth)].join('/'));
  }
  return dirs;
}

const firstLine = (text: string | undefined) => text?.split('\n')[0]?.trim();

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

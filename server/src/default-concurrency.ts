import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';

/**
 * The default of MAX_CONCURRENCY: two render slots a core, as long as that many renderers at their
 * memory limit (RENDERER_MEMORY_LIMIT_MB) take at most half of the memory, and at least 2.
 *
 * Why two a core: a capture does not keep a core busy all of its time (the page's network, the
 * frame the screenshot waits for, the reset), so one slot a core leaves part of the CPU idle.
 * Measured on two cores with four clients (docs/performance.md): four slots did 1.05–1.09× the
 * captures/s of two, for the same CPU a capture; a kept page per client keeps the cores as busy.
 * Why the memory bound: the containment budget (docs/containment.md) holds each renderer to its
 * limit, and MAX_CONCURRENCY of them at the limit must fit beside Chromium, the service and the
 * system. A 2-core, 4 GB host keeps 2 slots; this 2-core, 24 GiB machine gets 4.
 * Both are read as a container sees them: the cgroup's CPU quota and memory limit when set.
 */
export function defaultConcurrency(rendererMemoryLimitMb: number, host: Host = { cores: cores(), memoryMb: memoryMb() }): number {
  const byMemory = Math.floor(host.memoryMb / 2 / rendererMemoryLimitMb);
  return Math.max(2, Math.min(2 * host.cores, byMemory));
}

export interface Host {
  cores: number;
  memoryMb: number;
}

/** Cores this process may use: the cgroup's CPU quota (cpu.max, `max 100000` or `200000 100000`), else the machine's. */
export function cores(cpuMax = readFirstLine('/sys/fs/cgroup/cpu.max'), machine = availableParallelism()): number {
  const [quota, period] = cpuMax?.split(/\s+/) ?? [];
  const share = Number(quota) / Number(period);
  return Number.isFinite(share) && share > 0 ? Math.max(1, Math.min(machine, Math.ceil(share))) : machine;
}

/** MiB of memory this process may use: the cgroup's limit (v2 memory.max, v1 limit_in_bytes), else the machine's. */
export function memoryMb(
  limits = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'].map(readFirstLine),
  machine = totalmem(),
): number {
  const bytes = limits.map(Number).filter((limit) => Number.isFinite(limit) && limit > 0);
  return Math.min(machine, ...bytes) / 1024 ** 2;
}

function readFirstLine(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').split('\n')[0]?.trim();
  } catch {
    return undefined;
  }
}

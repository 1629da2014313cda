import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { cpuShare, defaultConcurrency, memoryMb } from '../../server/src/default-concurrency.js';

const GiB = 1024;

/** A file system of the given files (path → text); everything else is missing. */
const files = (entries: Record<string, string>) => (path: string) => entries[path];

describe('the default of MAX_CONCURRENCY: two slots a core, within half the memory at the renderer limit', () => {
  it('gives two slots a core where the memory allows them', () => {
    expect(defaultConcurrency(1024, { cpus: 2, memoryMb: 24 * GiB })).toBe(4);
    expect(defaultConcurrency(1024, { cpus: 8, memoryMb: 64 * GiB })).toBe(16);
  });

  it('keeps a 2-core, 4 GB host at 2, never goes below 2, and never past the setting’s 64', () => {
    expect(defaultConcurrency(1024, { cpus: 2, memoryMb: 3.8 * GiB })).toBe(2);
    expect(defaultConcurrency(1024, { cpus: 1, memoryMb: 1 * GiB })).toBe(2);
    expect(defaultConcurrency(1024, { cpus: 0.5, memoryMb: 64 * GiB })).toBe(2);
    expect(defaultConcurrency(128, { cpus: 64, memoryMb: 512 * GiB })).toBe(64);
  });

  it('gives fewer slots when each renderer may use more memory, and follows a fractional CPU quota', () => {
    expect(defaultConcurrency(8192, { cpus: 2, memoryMb: 24 * GiB })).toBe(2);
    expect(defaultConcurrency(2048, { cpus: 4, memoryMb: 24 * GiB })).toBe(6);
    expect(defaultConcurrency(1024, { cpus: 1.5, memoryMb: 24 * GiB })).toBe(3);
  });

  it("reads a cgroup v2 container's CPU quota and memory limit, and the machine's without them", () => {
    const container = files({
      '/proc/self/cgroup': '0::/\n',
      '/sys/fs/cgroup/cgroup.controllers': 'cpu memory',
      '/sys/fs/cgroup/cpu.max': '150000 100000\n',
      '/sys/fs/cgroup/memory.max': '4294967296\n',
    });
    expect(cpuShare(container, 16)).toBe(1.5);
    expect(memoryMb(container, 64 * 1024 ** 3)).toBe(4 * GiB);
    const unlimited = files({
      '/proc/self/cgroup': '0::/\n',
      '/sys/fs/cgroup/cgroup.controllers': 'cpu memory',
      '/sys/fs/cgroup/cpu.max': 'max 100000\n',
      '/sys/fs/cgroup/memory.max': 'max\n',
    });
    expect(cpuShare(unlimited, 16)).toBe(16);
    expect(memoryMb(unlimited, 8 * 1024 ** 3)).toBe(8 * GiB);
    expect(cpuShare(files({}), 16)).toBe(16);
    expect(memoryMb(files({}), 8 * 1024 ** 3)).toBe(8 * GiB);
  });

  it("finds a limit set on the process's own cgroup or a parent of it, v2 (a systemd unit) and v1", () => {
    const unit = files({
      '/proc/self/cgroup': '0::/system.slice/daguerre.service\n',
      '/sys/fs/cgroup/cgroup.controllers': 'cpu memory',
      '/sys/fs/cgroup/system.slice/daguerre.service/memory.max': '2147483648\n',
      '/sys/fs/cgroup/system.slice/cpu.max': '100000 100000\n',
    });
    expect(memoryMb(unit, 64 * 1024 ** 3)).toBe(2 * GiB);
    expect(cpuShare(unit, 16)).toBe(1);
    const v1 = files({
      '/proc/self/cgroup': '4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n',
      '/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes': '3221225472\n',
      '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n',
      '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '200000\n',
      '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000\n',
      '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': '-1\n',
      '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000\n',
    });
    expect(memoryMb(v1, 64 * 1024 ** 3)).toBe(3 * GiB);
    expect(cpuShare(v1, 16)).toBe(2);
  });

  it('is what loadConfig uses when MAX_CONCURRENCY is unset, and an explicit value wins', () => {
    expect(loadConfig({}).MAX_CONCURRENCY).toBe(defaultConcurrency(1024));
    expect(loadConfig({ RENDERER_MEMORY_LIMIT_MB: '4096' }).MAX_CONCURRENCY).toBe(defaultConcurrency(4096));
    expect(loadConfig({ MAX_CONCURRENCY: '3' }).MAX_CONCURRENCY).toBe(3);
    expect(() => loadConfig({ MAX_CONCURRENCY: '0' })).toThrow('MAX_CONCURRENCY must be a whole number from 1 to 64');
  });

  it('keeps twice as many warm contexts as slots (at least 4) unless WARM_CONTEXTS says otherwise', () => {
    expect(loadConfig({ MAX_CONCURRENCY: '4' }).WARM_CONTEXTS).toBe(8);
    expect(loadConfig({ MAX_CONCURRENCY: '1' }).WARM_CONTEXTS).toBe(4);
    expect(loadConfig({}).WARM_CONTEXTS).toBe(Math.max(4, 2 * defaultConcurrency(1024)));
    expect(loadConfig({ MAX_CONCURRENCY: '4', WARM_CONTEXTS: '3' }).WARM_CONTEXTS).toBe(3);
  });
});

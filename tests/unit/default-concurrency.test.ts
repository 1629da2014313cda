import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { cores, defaultConcurrency, memoryMb } from '../../server/src/default-concurrency.js';

const GiB = 1024;

describe('the default of MAX_CONCURRENCY: two slots a core, within half the memory at the renderer limit', () => {
  it('gives two slots a core where the memory allows them', () => {
    expect(defaultConcurrency(1024, { cores: 2, memoryMb: 24 * GiB })).toBe(4);
    expect(defaultConcurrency(1024, { cores: 8, memoryMb: 64 * GiB })).toBe(16);
  });

  it('keeps a 2-core, 4 GB host at 2, and never goes below 2', () => {
    expect(defaultConcurrency(1024, { cores: 2, memoryMb: 3.8 * GiB })).toBe(2);
    expect(defaultConcurrency(1024, { cores: 1, memoryMb: 1 * GiB })).toBe(2);
  });

  it('gives fewer slots when each renderer may use more memory', () => {
    expect(defaultConcurrency(8192, { cores: 2, memoryMb: 24 * GiB })).toBe(2);
    expect(defaultConcurrency(2048, { cores: 4, memoryMb: 24 * GiB })).toBe(6);
  });

  it("reads a container's CPU quota and memory limit, and the machine's without them", () => {
    expect(cores('200000 100000', 16)).toBe(2);
    expect(cores('150000 100000', 16)).toBe(2);
    expect(cores('max 100000', 16)).toBe(16);
    expect(cores(undefined, 16)).toBe(16);
    expect(memoryMb(['4294967296', undefined], 64 * 1024 ** 3)).toBe(4 * GiB);
    expect(memoryMb(['max', '9223372036854771712'], 8 * 1024 ** 3)).toBe(8 * GiB);
    expect(memoryMb([undefined, undefined], 8 * 1024 ** 3)).toBe(8 * GiB);
  });

  it('is what loadConfig uses when MAX_CONCURRENCY is unset, and an explicit value wins', () => {
    expect(loadConfig({}).MAX_CONCURRENCY).toBe(defaultConcurrency(1024));
    expect(loadConfig({ RENDERER_MEMORY_LIMIT_MB: '4096' }).MAX_CONCURRENCY).toBe(defaultConcurrency(4096));
    expect(loadConfig({ MAX_CONCURRENCY: '3' }).MAX_CONCURRENCY).toBe(3);
    expect(() => loadConfig({ MAX_CONCURRENCY: '0' })).toThrow('MAX_CONCURRENCY must be a whole number from 1 to 64');
  });
});

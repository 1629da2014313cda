import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  busyTicksOfProcStat,
  cpuTicksOfStat,
  parseProcStat,
  processKindOfCmdline,
  pssKbOfSmapsRollup,
  treeOf,
  type ProcInfo,
} from '../../scripts/bench/proc-parse.js';

/**
 * The bench's /proc readers (scripts/bench/proc-parse.ts) on fixture text, laid out as proc(5)
 * says: fields 14–17 are utime, stime, cutime, cstime; field 22 the start time.
 */
// A renderer whose command name holds a space and parentheses, as Chromium's may.
const STAT =
  '4242 (chrome (renderer) 2) S 4200 4200 8806 0 -1 4194560 1000 0 0 0 150 30 7 3 20 0 12 0 987654 1000000 500 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0';

const SMAPS_ROLLUP = `55ceeebf7000-7ffe19e4f000 ---p 00000000 00:00 0                          [rollup]
Rss:                1744 kB
Pss:                 188 kB
Pss_Dirty:           116 kB
Pss_Anon:            116 kB
Pss_File:             72 kB
`;

const PROC_STAT = `cpu  64378 5584 12694 69819 549 3 187 51 0 0
cpu0 32000 2000 6000 35000 200 1 90 20 0 0
cpu1 32378 3584 6694 34819 349 2 97 31 0 0
intr 1234 0 0
`;

describe('bench /proc parsing', () => {
  it('reads pid, parent, state, start time and a command name holding spaces and parentheses from /proc/<pid>/stat', () => {
    expect(parseProcStat(4242, STAT)).toEqual({ pid: 4242, ppid: 4200, startTime: 987654, state: 'S', comm: 'chrome (renderer) 2' });
  });

  it('reads this very process as its own parent sees it', () => {
    const self = parseProcStat(process.pid, readFileSync('/proc/self/stat', 'utf8'));
    expect(self?.ppid).toBe(process.ppid);
    expect(self?.state).toBe('R');
  });

  it('refuses a stat line it cannot read', () => {
    expect(parseProcStat(1, '')).toBeUndefined();
    expect(parseProcStat(1, '1 (init) S notanumber')).toBeUndefined();
  });

  it('sums utime, stime, cutime and cstime', () => {
    expect(cpuTicksOfStat(STAT)).toBe(150 + 30 + 7 + 3);
    expect(cpuTicksOfStat('')).toBe(0);
  });

  it("takes smaps_rollup's Pss line, not Pss_Dirty or Pss_Anon", () => {
    expect(pssKbOfSmapsRollup(SMAPS_ROLLUP)).toBe(188);
    expect(pssKbOfSmapsRollup('Rss: 1744 kB\nPss_Anon: 116 kB\n')).toBeUndefined();
  });

  it("counts the machine's busy ticks as user + nice + system + irq + softirq of the first line", () => {
    expect(busyTicksOfProcStat(PROC_STAT)).toBe(64378 + 5584 + 12694 + 3 + 187);
    expect(busyTicksOfProcStat('')).toBe(0);
  });

  it('names the kind of a process from its command line', () => {
    expect(processKindOfCmdline('/usr/bin/node\0server/bin/daguerre.js\0serve')).toBe('node');
    expect(processKindOfCmdline('node\0bench.ts')).toBe('node');
    expect(processKindOfCmdline('/usr/lib/chromium/chromium\0--headless\0--remote-debugging-pipe')).toBe('browser');
    expect(processKindOfCmdline('/usr/lib/chromium/chromium\0--type=renderer\0--lang=en')).toBe('renderer');
    expect(processKindOfCmdline('/usr/lib/chromium/chromium\0--type=utility\0--utility-sub-type=network.mojom.NetworkService')).toBe(
      'network',
    );
    expect(processKindOfCmdline('/usr/lib/chromium/chromium\0--type=utility\0--utility-sub-type=storage.mojom.StorageService')).toBe(
      'utility',
    );
    expect(processKindOfCmdline('/usr/lib/chromium/chromium\0--type=gpu-process')).toBe('gpu-process');
  });

  it('walks a tree from its root, parents before children, and leaves other processes out', () => {
    const proc = (pid: number, ppid: number): ProcInfo => ({ pid, ppid, startTime: pid, state: 'S', comm: `p${pid}` });
    const all = [proc(6, 4), proc(5, 99), proc(4, 2), proc(3, 1), proc(2, 1), proc(1, 0), proc(99, 0)];
    expect(treeOf(all, 1).map((p) => p.pid)).toEqual([1, 3, 2, 4, 6]);
    expect(treeOf(all, 2).map((p) => p.pid)).toEqual([2, 4, 6]);
    expect(treeOf(all, 7)).toEqual([]);
    // A pid that names itself its parent (a bad reading) is visited once.
    expect(treeOf([proc(8, 8)], 8).map((p) => p.pid)).toEqual([8]);
  });
});

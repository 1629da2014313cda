import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ownerTag, processStartTicks, removeDeadOwnersProfiles } from '../../server/src/capture/browser/profile-owner.js';

const PREFIX = 'daguerre-chromium-';
let parent: string;

afterEach(() => rmSync(parent, { recursive: true, force: true }));

/** The pid of a process that has exited (a finished `true`). */
function deadPid(): number {
  const pid = spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim();
  return Number(pid);
}

describe('profile folders of dead instances', () => {
  it('removes folders whose owner exited, keeps live owners, foreign names and symlinks', () => {
    parent = mkdtempSync(join(tmpdir(), 'profile-owner-test-'));
    const dead = join(parent, `${PREFIX}${deadPid()}-12345-abc`);
    const live = join(parent, `${PREFIX}${ownerTag()}def`);
    // Same pid as this process but another start time: a reused pid, so its owner is gone.
    const reusedPid = join(parent, `${PREFIX}${process.pid}-1-ghi`);
    const foreign = join(parent, `${PREFIX}not-an-owner`);
    const otherPrefix = join(parent, `bench-raw-${deadPid()}-1-jkl`);
    for (const dir of [dead, live, reusedPid, foreign, otherPrefix]) mkdirSync(dir);
    const keep = join(parent, 'keep-me');
    mkdirSync(keep);
    const planted = join(parent, `${PREFIX}${deadPid()}-1-link`);
    symlinkSync(keep, planted);

    const removed = removeDeadOwnersProfiles(parent, PREFIX);

    expect(removed.sort()).toEqual([dead, reusedPid].sort());
    expect([dead, reusedPid].map(existsSync)).toEqual([false, false]);
    expect([live, foreign, otherPrefix, planted, keep].map(existsSync)).toEqual([true, true, true, true, true]);
  });

  it('reads a process start time that tells a reused pid apart', () => {
    expect(processStartTicks(process.pid)).toMatch(/^\d+$/);
    expect(processStartTicks(deadPid())).toBeUndefined();
  });
});

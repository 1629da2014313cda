import { lstatSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Chromium profile folders carry their owner in their name: the pid of the process that made them
 * and that process's start time (in clock ticks since boot, from /proc). The pair names one process
 * for the life of the machine, so a later process reusing the pid is never mistaken for the owner.
 * A service killed with SIGKILL cannot remove its profiles; the next start finds them by this name
 * and removes those whose owner is gone.
 */

/**
 * Start time of a running process in clock ticks since boot (field 22 of /proc/<pid>/stat), or
 * undefined when there is none. A zombie (killed, not yet reaped by its parent) counts as gone.
 */
export function processStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

/** The owner part of a profile folder's name for this process: `<pid>-<start ticks>-`. */
export function ownerTag(pid = process.pid): string {
  return `${pid}-${processStartTicks(pid) ?? '0'}-`;
}

const OWNER_IN_NAME = /^(\d+)-(\d+)-/;

/** True when the folder name's owner process is still the one running under that pid. */
export function ownerIsAlive(nameAfterPrefix: string): boolean {
  const owner = OWNER_IN_NAME.exec(nameAfterPrefix);
  // A name without an owner is not ours to judge.
  if (!owner) return true;
  return processStartTicks(Number(owner[1])) === owner[2];
}

/**
 * Removes the profile folders under `parent` named `<prefix><pid>-<ticks>-…` whose owner process
 * has exited. Returns the folders removed. Only real directories are touched (never a symlink that
 * Chromium's user could have planted under the same prefix).
 */
export function removeDeadOwnersProfiles(parent: string, prefix: string): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || ownerIsAlive(name.slice(prefix.length))) continue;
    const path = join(parent, name);
    try {
      if (!lstatSync(path).isDirectory()) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // Gone already (another instance's start-up removed it) or not ours to remove: leave it.
    }
  }
  return removed;
}

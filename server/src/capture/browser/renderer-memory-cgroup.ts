import { mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { mkdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ownerIsAlive, ownerTag } from './profile-owner.js';
import { ignoreBecause } from '../../ignore-error.js';

/**
 * The kernel's part of the renderer memory limit (docs/containment.md), where it can take one: each
 * watched Chromium process gets a memory cgroup of its own whose limit is what the process may
 * still grow by, with the kernel's OOM killer turned off in it. A process that reaches its limit is
 * then held there by the kernel (its allocations wait) instead of growing while the watchdog's next
 * sample is due; the watchdog sees it waiting (`under_oom`) and ends it, as it ends any process
 * past the limit.
 *
 * This uses the cgroup v1 memory controller, the one whose `oom_kill_disable` holds a process at
 * its limit: on hosts where the memory controller is on the v1 hierarchy and the service runs as
 * root (as on the machines this was built on, whose cgroup2 mount has no memory controller). Where
 * it is not available (no v1 memory hierarchy, not root, a read-only cgroupfs) the watchdog alone
 * enforces the limit. A process is moved into its cgroup as soon as the watchdog first sees it;
 * what it had allocated before stays charged where it was, which is why the cgroup's limit is the
 * limit minus the process's size at that moment.
 */

const V1_MEMORY_MOUNT = '/sys/fs/cgroup/memory';
const PREFIX = 'daguerre-';
/** A cgroup limit never below this, so that a process already near the limit still gets a cgroup that holds it. */
const MIN_LIMIT_BYTES = 16 * 1024 ** 2;
/** Several runtimes in one process (tests) each get a folder of their own. */
let instances = 0;

export class MemoryCgroups {
  private readonly confined = new Set<number>();
  /** Processes whose move into their cgroup is under way (confine). */
  private readonly moving = new Set<number>();

  private constructor(private readonly base: string) {}

  /**
   * Opens this process's own folder of cgroups under its v1 memory cgroup, after removing the
   * folders that services which died left behind. Undefined where the kernel will not do it here.
   */
  static open(mount = V1_MEMORY_MOUNT, procSelfCgroup = '/proc/self/cgroup'): MemoryCgroups | undefined {
    if (process.getuid?.() !== 0) return undefined;
    try {
      const own = /^\d+:memory:(.*)$/m.exec(readFileSync(procSelfCgroup, 'utf8'))?.[1];
      if (own === undefined) return undefined;
      const parent = join(mount, own);
      readFileSync(join(parent, 'memory.limit_in_bytes'), 'utf8');
      removeDeadOwnersCgroups(parent);
      instances += 1;
      const base = join(parent, `${PREFIX}${ownerTag()}${instances}`);
      mkdirSync(base, { recursive: true });
      return new MemoryCgroups(base);
    } catch {
      return undefined;
    }
  }

  /** Whether the process has its cgroup, or is being moved into it. */
  has(pid: number): boolean {
    return this.confined.has(pid) || this.moving.has(pid);
  }

  /**
   * Moves a process into a cgroup of its own that lets it grow by `headroomBytes`; `refused` is
   * called when the kernel will not. Done on libuv's threads: moving a process between cgroups
   * waits for the kernel (an RCU grace period, up to about 20 ms here), and on the main thread that
   * wait stalled every capture's DevTools traffic with it (profiled at four clients).
   */
  confine(pid: number, headroomBytes: number, refused: () => void): void {
    const dir = join(this.base, `p${pid}`);
    this.moving.add(pid);
    // Never rejects: every step's failure ends in the catch below, which refuses the process.
    void (async () => {
      try {
        await mkdir(dir);
        await writeFile(join(dir, 'memory.limit_in_bytes'), String(Math.max(MIN_LIMIT_BYTES, Math.floor(headroomBytes))));
        // Held at the limit rather than killed by the kernel: the watchdog ends it and says why.
        await writeFile(join(dir, 'memory.oom_control'), '1');
        await writeFile(join(dir, 'cgroup.procs'), String(pid));
        this.confined.add(pid);
      } catch {
        await rmdir(dir).catch(ignoreBecause('not made, or the process is in it after all'));
        refused();
      } finally {
        this.moving.delete(pid);
      }
    })();
  }

  /** Whether the process is waiting at its cgroup's limit. */
  atLimit(pid: number): boolean {
    try {
      return /^under_oom 1$/m.test(readFileSync(join(this.base, `p${pid}`, 'memory.oom_control'), 'utf8'));
    } catch {
      return false;
    }
  }

  /** Bytes charged to the process's cgroup (what it allocated since it was moved there). */
  usage(pid: number): number {
    try {
      return Number(readFileSync(join(this.base, `p${pid}`, 'memory.usage_in_bytes'), 'utf8').trim());
    } catch {
      return 0;
    }
  }

  /** Removes the cgroups of processes that are gone (a cgroup can be removed once it has no process). */
  forget(livePids: Set<number>): void {
    for (const pid of this.confined) {
      if (livePids.has(pid)) continue;
      try {
        rmdirSync(join(this.base, `p${pid}`));
        this.confined.delete(pid);
      } catch {
        // Its last process is still exiting: removed on a later pass.
      }
    }
  }

  /** Removes every cgroup of this service (at shutdown, once Chromium is gone). */
  close(): void {
    removeCgroupTree(this.base);
    this.confined.clear();
  }
}

/** Removes a folder of cgroups: each child cgroup (only empty ones can go), then the folder. */
function removeCgroupTree(dir: string): boolean {
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) rmdirSync(join(dir, entry.name));
    rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

/** The folders of cgroups of services that died (SIGKILL) without removing them, as their profiles are (profile-owner.ts). */
function removeDeadOwnersCgroups(parent: string): void {
  for (const name of readdirSync(parent)) {
    if (name.startsWith(PREFIX) && !ownerIsAlive(name.slice(PREFIX.length))) removeCgroupTree(join(parent, name));
  }
}

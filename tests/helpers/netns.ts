import { execFile, execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { promisify } from 'node:util';
import { alive } from './process-tree.js';

const run = promisify(execFile);
const ip = (...args: string[]) => run('ip', args, { timeout: 30_000 });

/** A simulated host: a network namespace with one address on the test's bridge. */
export interface Host {
  name: string;
  /** The network namespace's name (for `ip netns exec`). */
  namespace: string;
  address: string;
}

/** Namespaces and bridges are named after the creating process, so a later run can remove a dead run's leftovers. */
const NAMESPACE_PREFIX = 'rsh';
const namespaceOf = (pid: number, index: number) => `${NAMESPACE_PREFIX}${pid}-${index}`;
const bridgeOf = (pid: number) => `rsb${pid}`;

/**
 * Frames between two ports of the test's bridge pass through iptables' FORWARD chain when the
 * kernel's bridge netfilter is on, and a running Docker daemon turns it on and sets that chain's
 * policy to DROP: the simulated hosts would not reach each other. The rule lets the bridge's own
 * traffic through (a no-op where iptables is absent or the policy accepts).
 */
const forwardRule = (bridge: string) => ['FORWARD', '-i', bridge, '-o', bridge, '-j', 'ACCEPT'];
const iptables = (...args: string[]) => run('iptables', args, { timeout: 30_000 }).catch(() => undefined);

/** Removes namespaces and bridges left by runs whose process is gone (a crashed or killed test). */
async function removeLeftovers(): Promise<void> {
  const { stdout: namespaces } = await ip('netns', 'list');
  for (const line of namespaces.split('\n')) {
    const match = new RegExp(`^(${NAMESPACE_PREFIX}(\\d+)-\\d+)`).exec(line);
    if (match && !alive(Number(match[2]))) await ip('netns', 'del', match[1]!).catch(() => undefined);
  }
  const { stdout: links } = await ip('-o', 'link', 'show', 'type', 'bridge');
  for (const match of links.matchAll(/^\d+: (rsb(\d+)):/gm)) {
    if (!alive(Number(match[2]))) {
      await ip('link', 'del', match[1]!).catch(() => undefined);
      await iptables('-D', ...forwardRule(match[1]!));
    }
  }
}

/** A /24 in 10.200-249.x.0 that no interface of this machine uses yet. */
async function freeSubnet(): Promise<string> {
  const { stdout } = await ip('-4', '-o', 'addr', 'show');
  for (let attempt = 0; attempt < 50; attempt++) {
    const prefix = `10.${200 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 256)}`;
    if (!stdout.includes(` ${prefix}.`)) return prefix;
  }
  throw new Error('no free 10.x.y.0/24 subnet for the test network');
}

/**
 * Several "hosts" on one machine (docs/scaling.md, "What the multi-host test proves"): each a Linux
 * network namespace with its own address, joined by veth pairs to a bridge in the root namespace,
 * where the test itself lives at `.1`. Needs root. `destroy()` removes everything and kills
 * whatever still runs in the namespaces; a run that died before that is cleaned up by the next one.
 */
export class HostNetwork {
  readonly hosts = new Map<string, Host>();
  private readonly bridge = bridgeOf(process.pid);
  private prefix = '';
  private created = false;

  /** The test's own address (the root namespace, on the bridge). */
  get rootAddress(): string {
    return `${this.prefix}.1`;
  }

  /** Creates the bridge and one namespace per name, with addresses `.<octet>`. */
  async create(names: Record<string, number>): Promise<this> {
    await removeLeftovers();
    this.prefix = await freeSubnet();
    this.created = true;
    await ip('link', 'add', this.bridge, 'type', 'bridge');
    await ip('addr', 'add', `${this.rootAddress}/24`, 'dev', this.bridge);
    await ip('link', 'set', this.bridge, 'up');
    await iptables('-I', ...forwardRule(this.bridge));
    let index = 0;
    for (const [name, octet] of Object.entries(names)) {
      index += 1;
      const namespace = namespaceOf(process.pid, index);
      const inside = `rsv${process.pid}i${index}`.slice(-15);
      const outside = `rsv${process.pid}o${index}`.slice(-15);
      const address = `${this.prefix}.${octet}`;
      await ip('netns', 'add', namespace);
      this.hosts.set(name, { name, namespace, address });
      await ip('link', 'add', inside, 'type', 'veth', 'peer', 'name', outside);
      await ip('link', 'set', outside, 'master', this.bridge, 'up');
      await ip('link', 'set', inside, 'netns', namespace);
      await ip('-n', namespace, 'addr', 'add', `${address}/24`, 'dev', inside);
      await ip('-n', namespace, 'link', 'set', inside, 'up');
      await ip('-n', namespace, 'link', 'set', 'lo', 'up');
    }
    return this;
  }

  host(name: string): Host {
    const host = this.hosts.get(name);
    if (!host) throw new Error(`no host ${name}`);
    return host;
  }

  /**
   * Starts a command on a host. `ip netns exec` enters the namespace and execs the command, so the
   * child's pid is the command's own (a SIGKILL to it kills the command, not a wrapper).
   */
  spawn(hostName: string, command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.host(hostName).namespace, command, ...args], options);
  }

  /** Pids of the processes whose network namespace is the host's. */
  pids(hostName: string): number[] {
    const output = execFileSync('ip', ['netns', 'pids', this.host(hostName).namespace], { encoding: 'utf8' });
    return output.split('\n').filter(Boolean).map(Number);
  }

  async destroy(): Promise<void> {
    if (!this.created) return;
    for (const host of this.hosts.values()) {
      for (const pid of this.pids(host.name)) if (alive(pid)) process.kill(pid, 'SIGKILL');
      await ip('netns', 'del', host.namespace).catch(() => undefined);
    }
    await ip('link', 'del', this.bridge).catch(() => undefined);
    await iptables('-D', ...forwardRule(this.bridge));
    this.hosts.clear();
    this.created = false;
  }
}

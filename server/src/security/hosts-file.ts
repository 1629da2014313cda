import { readFile, stat } from 'node:fs/promises';
import { isIP } from 'node:net';

const HOSTS_FILE = '/etc/hosts';
/** How often the file's modification time is looked at (a container's /etc/hosts is written at its start). */
const CHECKED_EVERY_MS = 1_000;

let known: { mtimeMs: number; names: Map<string, string[]> } | undefined;
let checked: { at: number; done: Promise<void> } | undefined;

/** The hosts(5) format: an address, then its names; `#` starts a comment. */
function parseHosts(text: string): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/);
    if (!address || isIP(address.replace(/%.*$/, '')) === 0) continue;
    for (const alias of aliases) {
      const key = alias.toLowerCase();
      names.set(key, [...(names.get(key) ?? []), address]);
    }
  }
  return names;
}

async function reread(): Promise<void> {
  try {
    const { mtimeMs } = await stat(HOSTS_FILE);
    if (known?.mtimeMs !== mtimeMs) known = { mtimeMs, names: parseHosts(await readFile(HOSTS_FILE, 'utf8')) };
  } catch {
    known = undefined;
  }
}

/**
 * The addresses /etc/hosts gives a name, or undefined when it names none. The resolver asks the
 * name servers itself (resolver.ts), so it reads this file as getaddrinfo would first
 * (https://man7.org/linux/man-pages/man5/hosts.5.html): a Compose `extra_hosts` entry or a
 * Kubernetes `hostAliases` one is honoured.
 */
export async function hostsFileAddresses(host: string): Promise<string[] | undefined> {
  const now = Date.now();
  // Callers at once share one look at the file.
  if (!checked || now - checked.at >= CHECKED_EVERY_MS) checked = { at: now, done: reread() };
  await checked.done;
  // A fully qualified name (its trailing dot) is the same entry, as getaddrinfo reads it.
  return known?.names.get(host.toLowerCase().replace(/\.$/, ''));
}

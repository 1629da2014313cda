import { lookup, Resolver as AresResolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { hostsFileAddresses } from './hosts-file.js';
import { searchCandidates, systemSearchRules } from './resolv-conf.js';

/** Resolves a host name to all of its addresses. Replaceable in tests (a stub resolver for rebinding). */
export type Resolver = (host: string) => Promise<string[]>;

/** A name asked again within this time is answered from the last answer (a page asks for each of its images). */
const ANSWER_KEPT_MS = 10_000;
const ANSWERS_KEPT = 2_000;

/** A final answer: the name does not exist, or has no address. */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA']);

/** Whether a resolver's error is the name's own final answer (not a name server that did not answer). */
export const isNoSuchName = (error: unknown) => NO_SUCH_NAME.has((error as NodeJS.ErrnoException | null)?.code ?? '');

/**
 * The name servers of resolv.conf, asked through c-ares (its search domains applied here).
 * Not the system's getaddrinfo: glibc sends a name's A and AAAA queries together and waits
 * resolv.conf's timeout, 5 s by default, when one reply is lost (as happens when a page names many
 * hosts at once; https://man7.org/linux/man-pages/man5/resolv.conf.5.html, `single-request`), and
 * each such wait holds one of libuv's four threads, which file reads share. c-ares needs no thread
 * and asks again after its own short timeout.
 */
const nameServers = new AresResolver({ timeout: 300, tries: 4 });

/** The addresses the name servers give `host` itself; rejects with ENOTFOUND when the answer is final. */
async function askFor(host: string): Promise<string[]> {
  const [v4, v6] = await Promise.allSettled([nameServers.resolve4(host), nameServers.resolve6(host)]);
  const addresses = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
  if (addresses.length > 0) return addresses;
  const codes = [v4, v6].map((answer) =>
    answer.status === 'rejected' ? ((answer.reason as NodeJS.ErrnoException).code ?? '') : 'ENODATA',
  );
  if (codes.every((code) => NO_SUCH_NAME.has(code))) {
    throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
  }
  // No name server answered: the system's own way (nsswitch, its resolver) decides.
  const records = await lookup(host, { all: true, verbatim: true });
  return records.map((record) => record.address);
}

/** The name as asked, then with resolv.conf's search domains when it is a short name (resolv-conf.ts). */
async function askNameServers(host: string): Promise<string[]> {
  try {
    return await askFor(host);
  } catch (error) {
    if (!isNoSuchName(error)) throw error;
    for (const candidate of searchCandidates(host, systemSearchRules())) {
      const found = await askFor(candidate).catch((failure: NodeJS.ErrnoException) => {
        if (isNoSuchName(failure)) return null;
        throw failure;
      });
      if (found) return found;
    }
    throw error;
  }
}

/**
 * Names asked together share one lookup and its answer is kept briefly, "no such name" included,
 * so twenty images on a dead host cost one lookup. Rebinding gains nothing from the kept answer:
 * the egress proxy connects to the address it checked.
 */
export function sharedAnswers(resolveOnce: Resolver): Resolver {
  const answers = new Map<string, { at: number; answer: Promise<string[]> }>();
  return (name) => {
    if (isIP(name)) return Promise.resolve([name]);
    const host = name.toLowerCase();
    const now = Date.now();
    const kept = answers.get(host);
    if (kept && now - kept.at < ANSWER_KEPT_MS) return kept.answer;
    const answer = resolveOnce(host);
    answers.delete(host);
    answers.set(host, { at: now, answer });
    if (answers.size > ANSWERS_KEPT) answers.delete(answers.keys().next().value!);
    // A failure that is not final (no name server answered) is asked again next time.
    answer.catch((error: NodeJS.ErrnoException) => {
      if (!isNoSuchName(error) && answers.get(host)?.answer === answer) answers.delete(host);
    });
    return answer;
  };
}

/**
 * The resolver of the network policy: every connection Chromium opens is resolved here once
 * (egress-proxy.ts), /etc/hosts first as the system does, then the name servers.
 */
export const systemResolver: Resolver = sharedAnswers(async (host) => (await hostsFileAddresses(host)) ?? askNameServers(host));

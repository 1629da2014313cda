import { readFileSync } from 'node:fs';

/** What resolv.conf(5) says about names that are not fully qualified. */
export interface SearchRules {
  /** Domains appended to a short name, in order (`search`, or `domain`). */
  search: string[];
  /** A name with fewer dots than this is tried with the search domains (`options ndots:n`, default 1). */
  ndots: number;
}

export function parseResolvConf(text: string): SearchRules {
  let search: string[] = [];
  let ndots = 1;
  for (const line of text.split('\n')) {
    const [keyword, ...values] = line
      .replace(/[#;].*/, '')
      .trim()
      .split(/\s+/);
    // The last `search` or `domain` line wins, as in the resolver (https://man7.org/linux/man-pages/man5/resolv.conf.5.html).
    if (keyword === 'search' || keyword === 'domain') search = values.filter(Boolean).map((domain) => domain.replace(/\.$/, ''));
    if (keyword === 'options') {
      for (const option of values) {
        const match = /^ndots:(\d+)$/.exec(option);
        if (match) ndots = Math.min(15, Number(match[1]));
      }
    }
  }
  return { search, ndots };
}

/**
 * The names to ask after `host` itself found nothing: the search domains appended, for a name that
 * is not fully qualified and has fewer dots than ndots. c-ares's queries (resolver.ts) do not apply
 * the search list themselves (https://github.com/nodejs/node/issues/17850).
 */
export function searchCandidates(host: string, rules: SearchRules): string[] {
  if (host.endsWith('.') || (host.match(/\./g)?.length ?? 0) >= rules.ndots) return [];
  return rules.search.map((domain) => `${host}.${domain}`);
}

let systemRules: SearchRules | undefined;

/** The machine's rules, read once (a container's resolv.conf is written before its start). */
export function systemSearchRules(): SearchRules {
  if (!systemRules) {
    try {
      systemRules = parseResolvConf(readFileSync('/etc/resolv.conf', 'utf8'));
    } catch {
      systemRules = { search: [], ndots: 1 };
    }
  }
  return systemRules;
}

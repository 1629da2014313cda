import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Resolves a host name to all of its addresses. Replaceable in tests (a stub resolver for rebinding). */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) => {
  if (isIP(host)) return [host];
  const records = await lookup(host, { all: true, verbatim: true });
  return records.map((r) => r.address);
};

import { isIP } from 'node:net';
import { addressAllowed, type AddressPolicy } from './address-policy.js';
import { isNoSuchName, type Resolver } from './resolver.js';

/**
 * The one wording of every refused destination, whether refused before any work or by the egress
 * proxy during a capture (capture/page/landing-checks.ts): it never says which check matched.
 */
export function refusedDestinationWords(field: string) {
  return {
    message: `${field}: the destination is not allowed (only public internet addresses can be reached)`,
    details: [{ field, message: 'the destination is not allowed', value: null }],
  };
}

export class DestinationRefusedError extends Error {
  constructor(
    readonly host: string,
    readonly reason: string,
    /** The name has no address (as opposed to an address the policy refuses). */
    readonly unresolved = false,
  ) {
    super(`destination ${host} refused: ${reason}`);
  }
}

/** Host of a URL as a bare name or address (brackets of IPv6 literals removed). */
export function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '');
}

/**
 * Resolves `host` once and returns the address to connect to, refusing the destination when ANY
 * of its addresses is not allowed (a name that mixes public and private answers is refused whole).
 * The caller connects to the returned address, never re-resolving: that is what defeats rebinding.
 */
export async function checkedAddress(policy: AddressPolicy, resolve: Resolver, host: string, port: number): Promise<string> {
  let addresses: string[];
  const bare = bareHost(host);
  try {
    // An address literal is judged as it is: no resolver is asked about it.
    addresses = isIP(bare) ? [bare] : await resolve(bare);
  } catch (error) {
    // Only "no such name" is the name's own answer; a name server that did not answer is not.
    throw new DestinationRefusedError(host, `does not resolve (${(error as NodeJS.ErrnoException).code ?? 'error'})`, isNoSuchName(error));
  }
  if (addresses.length === 0) throw new DestinationRefusedError(host, 'does not resolve', true);
  const refused = addresses.find((address) => !addressAllowed(policy, address, port));
  if (refused !== undefined) throw new DestinationRefusedError(host, `resolves to non-public address ${refused}`);
  return addresses[0]!;
}

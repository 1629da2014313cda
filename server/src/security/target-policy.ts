import type { LookupAddress, LookupOptions } from 'node:dns';
import { ApiError } from '../errors.js';
import { addressAllowed, type AddressPolicy } from './address-policy.js';
import { bareHost, checkedAddress, DestinationRefusedError, refusedDestinationWords } from './destination-check.js';
import type { Resolver } from './resolver.js';

/** The 400 for a destination refused before any work. */
export function destinationNotAllowed(field: string): ApiError {
  const { message, details } = refusedDestinationWords(field);
  return new ApiError('INVALID_INPUT', message, { details });
}

const DEFAULT_PORT: Record<string, number> = { 'http:': 80, 'https:': 443 };

/**
 * Checks a URL before any browser work, for a clean 400. It is a courtesy, not the boundary: the
 * egress proxy checks again at connect time, including every redirect and subresource.
 */
export async function assertUrlAllowed(policy: AddressPolicy, resolve: Resolver, field: string, raw: string): Promise<void> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw destinationNotAllowed(field);
  }
  const port = url.port ? Number(url.port) : DEFAULT_PORT[url.protocol];
  // Credentials belong in a proxy's URL (README: they are used); a target never needs them.
  const credentials = url.username !== '' || url.password !== '';
  if (port === undefined || (credentials && field !== 'proxyUrl')) throw destinationNotAllowed(field);
  try {
    await checkedAddress(policy, resolve, bareHost(url.hostname), port);
  } catch (error) {
    // With every address allowed, a missing name is the target's own error: the capture fails as
    // the browser meets it, naming the host (docs/security.md). Otherwise one answer whether or not
    // the name resolves, so that internal names cannot be enumerated.
    if (error instanceof DestinationRefusedError && error.unresolved && policy.allowPrivateNetwork) return;
    if (error instanceof DestinationRefusedError) throw destinationNotAllowed(field);
    throw error;
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for Node HTTP agents: resolves once, refuses non-public answers at connect time, so a
 * client (the S3 uploader) can never be pointed at the internal network, redirects and rebinding included.
 */
export function guardedLookup(policy: AddressPolicy, resolve: Resolver, port: number) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname).then(
      (addresses) => {
        const refused = addresses.find((address) => !addressAllowed(policy, address, port));
        if (refused !== undefined || addresses.length === 0) {
          callback(Object.assign(new Error(`destination ${hostname} is not allowed`), { code: 'EDESTINATIONREFUSED' }), '', 0);
          return;
        }
        const first = addresses[0]!;
        const family = first.includes(':') ? 6 : 4;
        if (options.all)
          callback(
            null,
            addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
          );
        else callback(null, first, family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

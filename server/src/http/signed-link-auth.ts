import { errors } from '../errors.js';
import { rawQueryOf, signatureMatches, splitSignedQuery } from '../security/signing.js';
import type { ApiKeyService, AuthenticatedKey } from '../services/api-keys.js';

const UNIX_SECONDS = /^\d{1,12}$/;

/** The single value of a parameter in a raw query string, or undefined when absent or repeated. */
function singleParam(query: string, name: string): string | undefined {
  const values = new URLSearchParams(query).getAll(name);
  return values.length === 1 ? values[0] : undefined;
}

/**
 * Checks a signed capture link against the query string exactly as sent. The signature is checked
 * before anything about the key is revealed (its expiry, revocation): without the secret a caller
 * learns only INVALID_SIGNATURE. Then the link's own expiry, then the key's states as for any key.
 */
export async function verifySignedLink(keys: ApiKeyService, originalUrl: string, nowMs = Date.now()): Promise<AuthenticatedKey> {
  const rawQuery = rawQueryOf(originalUrl);
  const signed = splitSignedQuery(rawQuery);
  if (!signed) throw errors.invalidSignature('signature must be the last parameter, 64 lowercase hex characters');
  const keyId = singleParam(signed.signed, 'keyId');
  if (!keyId) throw errors.invalidSignature('keyId (the API key id) must be given once');
  const expires = singleParam(signed.signed, 'expires');
  const repeatedExpires = expires === undefined && new URLSearchParams(signed.signed).has('expires');
  if (repeatedExpires || (expires !== undefined && !UNIX_SECONDS.test(expires))) {
    throw errors.invalidSignature('expires must be given at most once, as whole unix seconds');
  }
  const row = await keys.findForSignedLink(keyId);
  const secret = row?.signing_secret_encrypted ? keys.signingSecrets.open(row.id, row.signing_secret_encrypted) : undefined;
  if (!row || !secret || !signatureMatches(secret, signed)) throw errors.invalidSignature('it does not match the link');
  if (expires !== undefined && Number(expires) * 1000 <= nowMs) throw errors.signedLinkExpired();
  return keys.accept(row);
}

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Lowercase hex HMAC-SHA256: 64 characters. */
const SIGNATURE = /^[0-9a-f]{64}$/;
const SECRET_PREFIX = 'rss_';
export const SIGNATURE_PARAM = 'signature';

/** A new signing secret: 32 random bytes, prefixed so it is recognizable (and redactable) in text. */
export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** The signature of a signed link: lowercase hex HMAC-SHA256 of the query string, keyed with the secret. */
export function signQuery(secret: string, query: string): string {
  return createHmac('sha256', secret).update(query, 'utf8').digest('hex');
}

export interface SignedQuery {
  /** The query string exactly as sent, up to (not including) `&signature=`. */
  signed: string;
  signature: string;
}

/**
 * Splits a raw query string (without `?`) into the signed part and the signature, which must be
 * the last parameter. Returns undefined when the query does not end with a well-formed signature.
 */
export function splitSignedQuery(rawQuery: string): SignedQuery | undefined {
  const marker = `&${SIGNATURE_PARAM}=`;
  const at = rawQuery.lastIndexOf(marker);
  if (at <= 0) return undefined;
  const signature = rawQuery.slice(at + marker.length);
  if (!SIGNATURE.test(signature)) return undefined;
  return { signed: rawQuery.slice(0, at), signature };
}

/** Constant-time check of a presented signature against the one computed with the secret. */
export function signatureMatches(secret: string, signed: SignedQuery): boolean {
  const expected = Buffer.from(signQuery(secret, signed.signed), 'hex');
  const presented = Buffer.from(signed.signature, 'hex');
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** The raw query string of a request URL exactly as sent (no decoding, no re-encoding). */
export function rawQueryOf(originalUrl: string): string {
  const at = originalUrl.indexOf('?');
  if (at < 0) return '';
  const hash = originalUrl.indexOf('#', at);
  return originalUrl.slice(at + 1, hash < 0 ? undefined : hash);
}

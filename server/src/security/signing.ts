import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Lowercase hex HMAC-SHA256: 64 characters. */
const SIGNATURE = /^[0-9a-f]{64}$/;
export const SIGNATURE_PARAM = 'signature';

/**
 * A new signing secret in the Standard Webhooks form, `whsec_` + base64 of 32 random bytes, so a
 * webhook receiver can use it as it is (`new Webhook(secret)` of the standardwebhooks libraries).
 * Secrets issued before (`rss_` + base64url) keep working: see security/webhook-signature.ts.
 */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The signature of a signed link: lowercase hex HMAC-SHA256 of the query string, keyed with the
 * secret's text (UTF-8, prefix included) whatever its form, so links work the same for old and new secrets.
 */
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

/**
 * The forms of a signed query that mean the same link (same parameters, same values, same order),
 * so that re-encoding on the way does not break it:
 * - browsers (fetch, `<img src>`) send `'` as `%27`, which encodeURIComponent leaves alone;
 * - proxies and gateways re-serialize a query as application/x-www-form-urlencoded (Prism sends a
 *   space as `+` where it came as `%20`): the form URLSearchParams writes, which the SDK signs.
 * Every form authenticates exactly the decoded parameters the server then reads.
 */
export function equivalentSignedForms(signed: string): string[] {
  const forms = [signed, signed.replace(/%27/gi, "'"), new URLSearchParams(signed).toString()];
  return [...new Set(forms)];
}

/** Constant-time check of a presented signature against the one computed with the secret. */
export function signatureMatches(secret: string, signed: SignedQuery): boolean {
  const presented = Buffer.from(signed.signature, 'hex');
  let matched = false;
  for (const form of equivalentSignedForms(signed.signed)) {
    const expected = Buffer.from(signQuery(secret, form), 'hex');
    // Every form is checked (no early exit), so the time does not tell which one matched.
    if (presented.length === expected.length && timingSafeEqual(presented, expected)) matched = true;
  }
  return matched;
}

/** The raw query string of a request URL exactly as sent (no decoding, no re-encoding). */
export function rawQueryOf(originalUrl: string): string {
  const at = originalUrl.indexOf('?');
  if (at < 0) return '';
  const hash = originalUrl.indexOf('#', at);
  return originalUrl.slice(at + 1, hash < 0 ? undefined : hash);
}

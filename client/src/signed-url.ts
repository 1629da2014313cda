import { contract } from '@daguerre/contract';
import { needsJsonBody, toCaptureQuery, type CaptureRequest } from './capture-request.js';
import { pathOf } from './route-request.js';

export interface SignedUrlOptions {
  /** Seconds from now after which the service refuses the link (SIGNED_LINK_EXPIRED). Without it the link does not expire. */
  expiresIn?: number;
  /** The clock, for tests: epoch milliseconds. */
  now?: number;
}

export interface SigningCredentials {
  baseUrl: string;
  keyId: string;
  signingSecret: string;
}

/**
 * Web Crypto (global in Node 20 and browsers) rather than node:crypto: the client stays free of
 * Node-only modules. Its HMAC is asynchronous, hence `signedUrl()` returns a promise.
 */
async function hmacSha256Hex(secret: string, message: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await globalThis.crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, encoder.encode(message)));
  return Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * A signed `GET /capture` link: the capture parameters, then keyId and expires, then `signature`
 * last, the lowercase hex HMAC-SHA256 of everything before `&signature=`, keyed with the signing
 * secret. The link carries no key, so it can stand in a public `<img src>`.
 */
export async function signCaptureUrl(
  credentials: SigningCredentials,
  request: CaptureRequest,
  options: SignedUrlOptions = {},
): Promise<string> {
  if (request.openaiApiKey !== undefined) {
    throw new TypeError('signedUrl: openaiApiKey is a secret and cannot travel in a public link; capture server-side instead');
  }
  if (needsJsonBody(request)) {
    throw new TypeError('signedUrl: these options need a POST body (html too long, or a list entry with a comma) and cannot form a link');
  }
  const { query } = toCaptureQuery(request, true);
  query.set('keyId', credentials.keyId);
  if (options.expiresIn !== undefined) {
    if (!Number.isFinite(options.expiresIn) || options.expiresIn <= 0)
      throw new TypeError('signedUrl: expiresIn must be a positive number of seconds');
    query.set('expires', String(Math.floor((options.now ?? Date.now()) / 1000 + options.expiresIn)));
  }
  const signed = query.toString();
  const signature = await hmacSha256Hex(credentials.signingSecret, signed);
  return `${credentials.baseUrl}${pathOf(contract.capture, { query: `${signed}&signature=${signature}` })}`;
}

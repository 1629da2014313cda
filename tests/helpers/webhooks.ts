import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** One request a test's webhook receiver got. */
export interface Delivery {
  headers: IncomingMessage['headers'];
  body: string;
}

/** Standard Webhooks verification written from the specification, not with the library the server uses. */
export function independentlyVerified(secret: string, delivery: Delivery): boolean {
  const id = String(delivery.headers['webhook-id']);
  const timestamp = String(delivery.headers['webhook-timestamp']);
  // A whsec_ secret is base64 key bytes after the prefix (the Standard Webhooks form); an older rss_ one is its UTF-8 text.
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${delivery.body}`).digest();
  return String(delivery.headers['webhook-signature'])
    .split(' ')
    .some((entry) => {
      const [version, signature] = entry.split(',');
      const given = Buffer.from(signature ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

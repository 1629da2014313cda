import { Webhook } from 'standardwebhooks';

/** The Standard Webhooks form of a secret: `whsec_` + base64 of the key bytes. */
const STANDARD_PREFIX = 'whsec_';

/**
 * The webhook signer for a key's signing secret. A `whsec_` secret is used as the Standard Webhooks
 * libraries read it (base64 after the prefix), so a receiver verifies with `new Webhook(secret)` as
 * it is. A secret issued before (`rss_…`) keeps signing as it always did, with its UTF-8 text as the
 * key (`{ format: 'raw' }`), so existing receivers keep working until the secret is rotated.
 */
export function webhookFor(secret: string): Webhook {
  return secret.startsWith(STANDARD_PREFIX) ? new Webhook(secret) : new Webhook(secret, { format: 'raw' });
}

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com) through the reference library:
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed with the API
 * key's signing secret, the same secret that signs links.
 */
export function webhookHeaders(secret: string, messageId: string, body: string, now = new Date()): Record<string, string> {
  const signature = webhookFor(secret).sign(messageId, now, body);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com) through the reference library:
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`. The key is the API
 * key's signing secret as its UTF-8 bytes (the library's "raw" format), the same secret that signs links.
 */
export function webhookHeaders(secret: string, messageId: string, body: string, now = new Date()): Record<string, string> {
  const signature = new Webhook(secret, { format: 'raw' }).sign(messageId, now, body);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

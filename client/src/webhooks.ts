import type { MonitorWebhookEvent, WebhookEvent as JobWebhookEvent } from '@daguerre/contract';
import { Webhook, WebhookVerificationError as LibraryVerificationError } from 'standardwebhooks';

/** Headers as Node (`req.headers`), fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function headerRecord(headers: WebhookHeaders): Record<string, string> {
  const record: Record<string, string> = {};
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    (headers as Headers).forEach((value, name) => (record[name.toLowerCase()] = value));
    return record;
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (value !== undefined) record[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return record;
}

/**
 * Every event `verifyWebhook` returns: an async capture's or a batch's (`CaptureWebhookEvent`,
 * `BatchWebhookEvent`), or a monitor's (`MonitorWebhookEvent`: `monitor.changed`, `monitor.failed`,
 * `monitor.paused`, `monitor.resumed`); narrow on `type`.
 */
export type WebhookEvent = JobWebhookEvent | MonitorWebhookEvent;
export type WebhookEventType = WebhookEvent['type'];

/**
 * Verifies a Daguerre webhook (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) with the signing secret of the API key that queued the job or the batch, and
 * returns the event: `capture.succeeded` / `capture.failed` (an async job, `data` its state) or
 * `batch.completed` / `batch.cancelled` (a batch, `data` the batch), or a monitor's event
 * (`monitor.changed` with the run, its diff and the links to the new, baseline and diff images;
 * `monitor.failed`; `monitor.paused` / `monitor.resumed` with a reason); narrow on `event.type`.
 * Throws when the signature is wrong or the timestamp is more than 5 minutes away (replays).
 * Pass the body exactly as received (the raw text), not a re-serialized object.
 */
export function verifyWebhook(signingSecret: string, body: string | Uint8Array, headers: WebhookHeaders): WebhookEvent {
  const payload = typeof body === 'string' ? body : new TextDecoder().decode(body);
  // `whsec_…` secrets are Standard Webhooks secrets; older `rss_…` ones are keyed by their text.
  const webhook = signingSecret.startsWith('whsec_') ? new Webhook(signingSecret) : new Webhook(signingSecret, { format: 'raw' });
  try {
    return webhook.verify(payload, headerRecord(headers)) as WebhookEvent;
  } catch (error) {
    if (error instanceof LibraryVerificationError) throw new WebhookVerificationError(error.message, { cause: error });
    throw error;
  }
}

/**
 * Thrown by `verifyWebhook` when the signature does not match or the timestamp is too old or too
 * new. The SDK's own class (the library is bundled, its types are not), so `instanceof` works
 * from this package alone.
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

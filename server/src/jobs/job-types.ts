import type { CaptureJobPayload } from '../services/queued-capture.js';

export const CAPTURE_QUEUE = 'captures';
export const WEBHOOK_QUEUE = 'webhooks';

/** What a capture job carries to a worker: declared with the submission service that builds it (services/queued-capture.ts). */
export type { CaptureJobPayload };

/** A webhook delivery job: the body is fixed once, so every retry sends the same bytes under the same id. */
export interface WebhookDelivery {
  url: string;
  keyId: string;
  /** Deliveries are capped per organization, so one organization's slow receivers cannot hold every slot. */
  organizationId?: string;
  messageId: string;
  body: string;
}

/** Whose webhook a message is, from its id: msg_batch_<batchId> (capture-batches.ts) or msg_<jobId> (job-announcer.ts); msg_mon_… is a monitor's. */
export function webhookSubjectOf(messageId: string): { jobId: string } | { batchId: string } | undefined {
  // A monitor's event (monitors/monitor-alerts.ts) belongs to no job nor batch.
  if (messageId.startsWith('msg_mon_')) return undefined;
  const batchId = /^msg_batch_(.+)$/.exec(messageId)?.[1];
  if (batchId) return { batchId };
  const jobId = /^msg_(.+)$/.exec(messageId)?.[1];
  return jobId ? { jobId } : undefined;
}

/** Fields of CaptureOptions that hold secrets: never written to the database, gone from Redis when the job ends. */
export const SECRET_OPTION_FIELDS = [
  'openaiApiKey',
  'proxyPassword',
  'proxyUsername',
  'requestStorageSecretAccessKey',
  'requestStorageAccessKeyId',
  'headers',
  'apiKey',
] as const;

/** The payload as the database keeps it: without secrets, and whether it had any (then it cannot be re-queued from there). */
export function storablePayload(payload: CaptureJobPayload): { json: string; hasSecrets: boolean } {
  const options = { ...payload.options } as Record<string, unknown>;
  let hasSecrets = payload.providerKeyHeader !== undefined;
  for (const field of SECRET_OPTION_FIELDS) {
    if (options[field] !== undefined) hasSecrets = true;
    delete options[field];
  }
  const { providerKeyHeader: _dropped, ...rest } = payload;
  return { json: JSON.stringify({ ...rest, options }), hasSecrets };
}

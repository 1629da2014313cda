import { z } from 'zod';
import { BatchDataSchema } from './bulk.js';
import { CaptureJobSchema } from './jobs.js';

/**
 * The bodies of the webhooks the service sends (docs/async-jobs.md, docs/bulk.md), signed with
 * Standard Webhooks: one per async capture when it ends, one per batch when it completes or is
 * cancelled. The client's `verifyWebhook()` returns a `WebhookEvent`; `type` tells them apart.
 */
export const CaptureWebhookEventSchema = z.object({
  type: z.enum(['capture.succeeded', 'capture.failed']).describe('How the job ended'),
  data: CaptureJobSchema.shape.data.describe('The job, as GET /captures/{jobId} answers it'),
});
export type CaptureWebhookEvent = z.infer<typeof CaptureWebhookEventSchema>;

export const BatchWebhookEventSchema = z.object({
  type: z.enum(['batch.completed', 'batch.cancelled']).describe('completed: every item ended; cancelled: DELETE /captures/bulk/{batchId}'),
  data: BatchDataSchema.describe('The batch, as GET /captures/bulk/{batchId} answers it'),
});
export type BatchWebhookEvent = z.infer<typeof BatchWebhookEventSchema>;

/** Every event a Daguerre webhook carries. */
export const WebhookEventSchema = z.discriminatedUnion('type', [CaptureWebhookEventSchema, BatchWebhookEventSchema]);
export type WebhookEvent = z.infer<typeof WebhookEventSchema>;
export type WebhookEventType = WebhookEvent['type'];
export const WEBHOOK_EVENT_TYPES = [
  ...CaptureWebhookEventSchema.shape.type.options,
  ...BatchWebhookEventSchema.shape.type.options,
] as const;

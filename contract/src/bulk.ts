import { z } from 'zod';
import { AsyncCaptureBodySchema, JOB_STATUSES, webhookUrlField, type AsyncCaptureOptions } from './jobs.js';
import { withOpenApi } from './openapi-meta.js';

/**
 * Bulk captures (issue #34): `POST /captures/bulk` queues many async captures in one call. Each item
 * is the body of `POST /captures` laid over `defaults`; every item is validated before anything is
 * queued, and a bad one is named by its index (`requests[3].viewportWidth`).
 */
export const BULK_LIMITS = {
  /** Items of one batch. */
  maxRequests: 500,
} as const;

export const BATCH_STATUSES = ['queued', 'running', 'completed', 'cancelled'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];
/** An item's status: a job's, or `cancelled` when the batch was cancelled before it ended, `expired` once its record is gone. */
export const BATCH_ITEM_STATUSES = [...JOB_STATUSES, 'cancelled', 'expired'] as const;
export type BatchItemStatus = (typeof BATCH_ITEM_STATUSES)[number];
/** The error code a job cancelled with its batch records. */
export const CANCELLED_CODE = 'CANCELLED';

const batchWebhookUrl = webhookUrlField(
  'Called once with POST when the whole batch is done (batch.completed) or cancelled (batch.cancelled), signed like job webhooks (Standard Webhooks, the API key\'s signing secret). For a webhook per item, give webhookUrl in the item (or in defaults).',
);

const anObject = (field: string) =>
  z.record(z.unknown(), { errorMap: () => ({ message: `${field} must be a JSON object of POST /captures fields` }) });

const bulkObject = z
  .object({
    defaults: anObject('defaults').optional().describe('Fields of POST /captures every item starts from; an item overrides them field by field.'),
    requests: z
      .array(anObject('requests[]'), { errorMap: () => ({ message: 'requests must be an array of objects' }) })
      .min(1, 'requests must hold at least one item')
      .max(BULK_LIMITS.maxRequests, `requests holds at most ${BULK_LIMITS.maxRequests} items`)
      .describe(`1 to ${BULK_LIMITS.maxRequests} items, each the JSON body of POST /captures (AsyncCaptureRequest) laid over defaults.`),
    webhookUrl: batchWebhookUrl,
  })
  .strict();

export interface BulkCaptureRequestParsed {
  items: AsyncCaptureOptions[];
  webhookUrl?: string;
}

/** Every item merged with the defaults and checked with the rules of POST /captures; issues name `requests[i].field`. */
export const BulkCaptureBodySchema = withOpenApi(
  bulkObject.transform((body, ctx): BulkCaptureRequestParsed => {
    const items: AsyncCaptureOptions[] = [];
    body.requests.forEach((item, index) => {
      const parsed = AsyncCaptureBodySchema.safeParse({ ...body.defaults, ...item });
      if (parsed.success) {
        items.push(parsed.data);
        return;
      }
      for (const issue of parsed.error.issues) {
        const fields = issue.code === 'unrecognized_keys' ? issue.keys : [String(issue.path[0] ?? 'request')];
        for (const field of fields) {
          const message = issue.code === 'unrecognized_keys' ? `${field} is not a parameter of POST /captures` : issue.message;
          ctx.addIssue({ code: z.ZodIssueCode.custom, path: [`requests[${index}].${field}`], message: `requests[${index}]: ${message}`, ...(issue.code === 'custom' && issue.params ? { params: issue.params } : {}) });
        }
      }
    });
    return { items, ...(body.webhookUrl !== undefined ? { webhookUrl: body.webhookUrl } : {}) };
  }),
  { title: 'BulkCaptureRequest' },
);
export type BulkCaptureInput = z.input<typeof bulkObject>;

const countsSchema = z.object({
  succeeded: z.number().int(),
  failed: z.number().int().describe('Items that failed (cancelled ones not included)'),
  queued: z.number().int(),
  running: z.number().int(),
  cancelled: z.number().int().describe('Items that were still queued or running when the batch was cancelled'),
});

const batchItemSchema = z.object({
  index: z.number().int().describe('Position of the item in requests'),
  jobId: z.string().uuid(),
  status: z.enum(BATCH_ITEM_STATUSES).describe('queued, active, succeeded, failed, cancelled, or expired (the job\'s record passed its retention)'),
  statusUrl: z.string().describe('GET /captures/{jobId}: the item\'s job'),
  fileUrl: z.string().optional().describe('GET /captures/{jobId}/file: present when the item succeeded'),
  error: z.object({ code: z.string(), message: z.string() }).optional().describe('Present when the item failed or was cancelled'),
});
export type BatchItem = z.infer<typeof batchItemSchema>;

export const BatchDataSchema = z.object({
  batchId: z.string().uuid(),
  status: z.enum(BATCH_STATUSES).describe('queued (nothing started), running, completed (every item ended) or cancelled'),
  createdAt: z.string().describe('ISO 8601 time the batch was accepted'),
  finishedAt: z.string().optional().describe('ISO 8601 time the batch completed or was cancelled'),
  total: z.number().int().describe('Items in the batch'),
  counts: countsSchema,
  creditsCharged: z.number().int().describe('Credits the batch\'s items have been charged so far (each item on its own success)'),
  statusUrl: z.string().describe('GET /captures/bulk/{batchId}'),
  items: z.array(batchItemSchema),
});
export type BatchData = z.infer<typeof BatchDataSchema>;

export const BulkAcceptedSchema = withOpenApi(z.object({ success: z.literal(true), data: BatchDataSchema }), { title: 'BulkCaptureAccepted' });
export const BatchSchema = withOpenApi(z.object({ success: z.literal(true), data: BatchDataSchema }), { title: 'CaptureBatch' });
export type Batch = z.infer<typeof BatchSchema>;

/** Body of a batch's webhook delivery. */
export interface BatchWebhookEvent {
  type: 'batch.completed' | 'batch.cancelled';
  data: BatchData;
}

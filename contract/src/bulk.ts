import { z } from 'zod';
import { AsyncCaptureBodySchema, asyncCaptureFields, JOB_STATUSES, webhookUrlField, type AsyncCaptureOptions } from './jobs.js';
import { withOpenApi } from './openapi-meta.js';

/**
 * Bulk captures (docs/bulk.md): `POST /captures/bulk` queues many async captures in one call. Each
 * item is the body of `POST /captures` laid over `defaults`; every item is validated before
 * anything is queued, and a bad one is named by its index (`requests[3].viewportWidth`).
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
  "Called once with POST when the whole batch is done (batch.completed) or cancelled (batch.cancelled), signed like job webhooks (Standard Webhooks, the API key's signing secret). For a webhook per item, give webhookUrl in the item (or in defaults).",
);

const anObject = (field: string) =>
  z.record(z.unknown(), { errorMap: () => ({ message: `${field} must be a JSON object of POST /captures fields` }) });

/** The body as the service first reads it: defaults and items are objects whose fields are checked once laid together. */
const bulkEnvelope = z
  .object({
    defaults: anObject('defaults').optional(),
    requests: z
      .array(anObject('requests[]'), { errorMap: () => ({ message: 'requests must be an array of objects' }) })
      .min(1, 'requests must hold at least one item')
      .max(BULK_LIMITS.maxRequests, `requests holds at most ${BULK_LIMITS.maxRequests} items`),
    webhookUrl: batchWebhookUrl,
  })
  .strict();

type WithoutDefaults<S extends z.ZodRawShape> = { [K in keyof S]: S[K] extends z.ZodDefault<infer T> ? z.ZodOptional<T> : S[K] };

/**
 * An item's absent field takes the defaults' value, and only then the service's default: an item
 * (or defaults) declaring `default: png` would say otherwise, and openapi-typescript makes every
 * field with a default required in a component (docs/openapi-and-tools.md). The descriptions still
 * name the service's default.
 */
function withoutDefaults<S extends z.ZodRawShape>(shape: S): WithoutDefaults<S> {
  const fields = Object.entries(shape).map(([name, field]) => [
    name,
    field instanceof z.ZodDefault
      ? field
          .removeDefault()
          .optional()
          .describe(field.description ?? '')
      : field,
  ]);
  return Object.fromEntries(fields) as WithoutDefaults<S>;
}

/**
 * An item of `requests`, or `defaults`: the fields of POST /captures (AsyncCaptureRequest), each
 * typed as there, none required on its own. One component serves both (a description on
 * `defaults` alone would make a second shape with the same title).
 */
export const BulkCaptureItemSchema = withOpenApi(
  z
    .object(withoutDefaults(asyncCaptureFields))
    .strict()
    .describe(
      'An item of requests, or the defaults every item starts from: the fields of POST /captures (AsyncCaptureRequest), none required on its own. ' +
        "Laid over defaults (the item's own fields win), each item must give exactly one of url or html and follow every rule of POST /captures; " +
        "an absent field takes the defaults' value, then the service's default.",
    ),
  { title: 'BulkCaptureItem' },
);
export type BulkCaptureItemInput = z.input<typeof BulkCaptureItemSchema>;

/** The body's typed shape: what the OpenAPI document and clients of the contract see. */
const bulkShape = z
  .object({
    defaults: BulkCaptureItemSchema.optional(),
    requests: z
      .array(BulkCaptureItemSchema)
      .min(1, 'requests must hold at least one item')
      .max(BULK_LIMITS.maxRequests, `requests holds at most ${BULK_LIMITS.maxRequests} items`)
      .describe(`1 to ${BULK_LIMITS.maxRequests} items, each laid over defaults and then checked as the JSON body of POST /captures.`),
    webhookUrl: batchWebhookUrl,
  })
  .strict()
  .describe(
    "defaults (optional): the fields every item starts from, an item overriding them field by field. requests: the captures, each a job of its own. webhookUrl (optional): the batch's webhook.",
  );

export interface BulkCaptureRequestParsed {
  items: AsyncCaptureOptions[];
  webhookUrl?: string;
}

interface BulkEnvelope {
  defaults?: Record<string, unknown>;
  requests: Array<Record<string, unknown>>;
  webhookUrl?: string;
}

/** Every item merged with the defaults and checked with the rules of POST /captures; issues name `requests[i].field`. */
function layItems(body: BulkEnvelope, ctx: z.RefinementCtx, fatal: boolean): BulkCaptureRequestParsed {
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
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [`requests[${index}].${field}`],
          message: `requests[${index}]: ${message}`,
          fatal,
          ...(issue.code === 'custom' && issue.params ? { params: issue.params } : {}),
        });
      }
    }
  });
  return { items, ...(body.webhookUrl !== undefined ? { webhookUrl: body.webhookUrl } : {}) };
}

/**
 * Runs before the typed shape: every item laid over the defaults is checked first, so a bad field
 * is named `requests[3].viewportWidth` (the shape alone would name `requests`) and a rule across
 * fields sees the item whole; then a field of defaults that every item overrides, named
 * `defaults.viewportWidth`. Any failure here ends the parse, so the shape refuses nothing more.
 */
function checkEveryItemFirst(body: unknown, ctx: z.RefinementCtx): unknown {
  const envelope = bulkEnvelope.safeParse(body);
  if (!envelope.success) {
    for (const issue of envelope.error.issues) ctx.addIssue({ ...issue, fatal: true });
    return body;
  }
  const { items } = layItems(envelope.data, ctx, true);
  if (items.length < envelope.data.requests.length || envelope.data.defaults === undefined) return body;
  const defaults = BulkCaptureItemSchema.safeParse(envelope.data.defaults);
  for (const issue of defaults.error?.issues ?? []) {
    const field = String(issue.path[0] ?? '');
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: [`defaults.${field}`], message: `defaults: ${issue.message}`, fatal: true });
  }
  return body;
}

/** `z.preprocess` would type the body's input as unknown; built this way it keeps the shape's typed fields. */
const checkedBulkShape = new z.ZodEffects<typeof bulkShape>({
  schema: bulkShape,
  typeName: z.ZodFirstPartyTypeKind.ZodEffects,
  effect: { type: 'preprocess', transform: checkEveryItemFirst },
});

/** The body of `POST /captures/bulk`, parsed to its items (each merged with the defaults, as POST /captures parses it). */
export const BulkCaptureBodySchema = withOpenApi(
  checkedBulkShape.transform((body, ctx) => layItems(body, ctx, false)),
  { title: 'BulkCaptureRequest' },
);
export type BulkCaptureInput = z.input<typeof BulkCaptureBodySchema>;

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
  status: z
    .enum(BATCH_ITEM_STATUSES)
    .describe("queued, active, succeeded, failed, cancelled, or expired (the job's record passed its retention)"),
  statusUrl: z.string().describe("GET /captures/{jobId}: the item's job"),
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
  creditsCharged: z.number().int().describe("Credits the batch's items have been charged so far (each item on its own success)"),
  statusUrl: z.string().describe('GET /captures/bulk/{batchId}'),
  items: z.array(batchItemSchema),
});
export type BatchData = z.infer<typeof BatchDataSchema>;

export const BulkAcceptedSchema = withOpenApi(z.object({ success: z.literal(true), data: BatchDataSchema }), {
  title: 'BulkCaptureAccepted',
});
export const BatchSchema = withOpenApi(z.object({ success: z.literal(true), data: BatchDataSchema }), { title: 'CaptureBatch' });
export type Batch = z.infer<typeof BatchSchema>;

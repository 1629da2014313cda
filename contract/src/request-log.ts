import { z } from 'zod';
import { withOpenApi } from './openapi-meta.js';
import { fromDecimalText, stringParam } from './params.js';

/**
 * The request log (`GET /captures`): every capture of the organization, whichever face sent it, as
 * the capture ledger records it. Kept for the operator's REQUEST_LOG_RETENTION_DAYS.
 */

/** Outcomes as a caller reads them (the ledger's own states map onto these, one to one). */
export const LOGGED_CAPTURE_STATUSES = ['running', 'succeeded', 'cached', 'failed', 'refused'] as const;
export type LoggedCaptureStatus = (typeof LOGGED_CAPTURE_STATUSES)[number];

/** Which face sent the capture. */
export const CAPTURE_KINDS = ['sync', 'async', 'batch', 'mcp', 'monitor'] as const;
export type CaptureKind = (typeof CAPTURE_KINDS)[number];
/** The kinds of a queued capture: MCP's jobs and batch items are told apart in the log. */
export type QueuedKind = Exclude<CaptureKind, 'sync'>;

export const CAPTURE_LOG_PAGE_SIZE = { min: 1, max: 100, default: 50 } as const;
const PAGE_SIZE_MESSAGE = `limit must be a whole number from ${CAPTURE_LOG_PAGE_SIZE.min} to ${CAPTURE_LOG_PAGE_SIZE.max}`;

/** An ISO 8601 time, or a date (read as 00:00 UTC): what a person types into a filter. */
const timeFilter = (field: string, description: string) =>
  z
    .string({ errorMap: () => ({ message: `${field} must be a string` }) })
    .refine((value) => /^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) && !Number.isNaN(Date.parse(value)), {
      message: `${field} must be an ISO 8601 date or date-time, e.g. 2026-11-28 or 2026-11-28T14:02:00Z`,
    })
    .optional()
    .describe(description);

export const CaptureLogQuerySchema = z
  .object({
    apiKey: z.string().optional().describe('API key; may instead be sent in header X-API-Key.'),
    status: z
      .enum(LOGGED_CAPTURE_STATUSES, { errorMap: () => ({ message: `status must be one of: ${LOGGED_CAPTURE_STATUSES.join(', ')}` }) })
      .optional()
      .describe(
        'Only captures with this outcome: running (credits reserved, not ended), succeeded (charged), cached (answered from the response cache, not charged), failed (ended in an error after its credits were reserved; released), refused (answered with an error before anything was reserved: bad input, no credits, the rate limit). Default: all.',
      ),
    keyId: z
      .string({ errorMap: () => ({ message: 'keyId must be a string' }) })
      .uuid('keyId must be the id of an API key (a UUID, as `key list` and the dashboard show it)')
      .optional()
      .describe('Only captures sent with this API key of the organization. Default: all keys.'),
    from: timeFilter(
      'from',
      'Only captures at or after this time (ISO 8601; a date means 00:00 UTC). Default: the start of the retention.',
    ),
    to: timeFilter('to', 'Only captures before this time (ISO 8601; a date means 00:00 UTC of that day). Default: now.'),
    limit: z
      .preprocess(
        fromDecimalText,
        z
          .number({ errorMap: () => ({ message: PAGE_SIZE_MESSAGE }) })
          .int(PAGE_SIZE_MESSAGE)
          .min(CAPTURE_LOG_PAGE_SIZE.min, PAGE_SIZE_MESSAGE)
          .max(CAPTURE_LOG_PAGE_SIZE.max, PAGE_SIZE_MESSAGE),
      )
      .default(CAPTURE_LOG_PAGE_SIZE.default)
      .describe(`Captures per page. Default: ${CAPTURE_LOG_PAGE_SIZE.default}.`),
    cursor: stringParam('cursor', 200, 'The nextCursor of the previous page, to read older captures.'),
  })
  .strict();
export type CaptureLogQuery = z.output<typeof CaptureLogQuerySchema>;

export const LoggedCaptureSchema = withOpenApi(
  z.object({
    requestId: z.string().describe('The X-Request-Id of the capture (of the job attempt, for async captures)'),
    createdAt: z.string().datetime().describe('ISO 8601 time the capture began'),
    finishedAt: z.string().datetime().nullable().describe('ISO 8601 time it ended; null while running'),
    keyId: z.string().nullable().describe('The API key that sent it; null when the key has since been deleted'),
    keyName: z.string().nullable().describe("The key's name, when the key still exists"),
    kind: z
      .enum(CAPTURE_KINDS)
      .describe('sync (GET/POST /capture), async (POST /captures), batch (an item of POST /captures/bulk), mcp (an MCP tool), monitor'),
    source: z.enum(['url', 'html']).describe('url, or html for inline HTML (whose content is never logged)'),
    target: z
      .string()
      .nullable()
      .describe(
        'The URL captured, with secret query values and credentials masked as in the server log ([REDACTED]); null for inline HTML',
      ),
    format: z.string().describe('The requested format'),
    status: z.enum(LOGGED_CAPTURE_STATUSES),
    httpStatus: z
      .number()
      .int()
      .nullable()
      .describe('The HTTP status the caller was answered, when the capture was answered in its request'),
    errorCode: z.string().nullable().describe("The error's code (the `code` of the error body); null for a success"),
    credits: z.number().int().describe('Credits charged (reserved while running); 0 for failures, refusals and cache hits'),
    durationMs: z.number().int().nullable().describe('Milliseconds from the start of the capture to its end'),
    fileSize: z.number().int().nullable().describe('Bytes of the file, for a success'),
    jobId: z.string().nullable().describe('The async job, for async, batch and MCP job captures'),
  }),
  { title: 'LoggedCapture' },
);
export type LoggedCapture = z.infer<typeof LoggedCaptureSchema>;

export const CaptureLogPageSchema = withOpenApi(
  z.object({
    success: z.literal(true),
    data: z.object({
      captures: z.array(LoggedCaptureSchema).describe('Newest first'),
      nextCursor: z.string().nullable().describe('Pass as cursor for the next (older) page; null on the last page'),
      retentionDays: z.number().int().describe('How long the server keeps the log (REQUEST_LOG_RETENTION_DAYS)'),
    }),
  }),
  { title: 'CaptureLogPage' },
);
export type CaptureLogPage = z.infer<typeof CaptureLogPageSchema>;

import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { MISSING_FIELD_PARAM } from './capture.js';
import { ErrorBodySchema } from './errors.js';
import type { RoutePolicy } from './route-policy.js';
import { withOpenApi } from './openapi-meta.js';
import { WEBHOOK_EVENT_TYPES } from './webhook-events.js';

/**
 * Webhook deliveries (docs/async-and-webhooks.md): every event the service queued for a job or a
 * batch, with each attempt to deliver it, and a way to send one again. An event's id is the
 * `webhook-id` header of every attempt, so a receiver that deduplicates on it sees a resend as the
 * same event.
 */

const c = initContract();

/** How an event stands: no attempt yet, delivered (some attempt got a 2xx), retrying, or failed (no retry left). */
export const WEBHOOK_EVENT_STATUSES = ['queued', 'delivered', 'retrying', 'failed'] as const;
export type WebhookEventStatus = (typeof WEBHOOK_EVENT_STATUSES)[number];

export const WebhookAttemptSchema = withOpenApi(
  z.object({
    attempt: z
      .number()
      .int()
      .describe('Number of the attempt within its delivery: 1 to 6 for the delivery made when the event was queued, 1 for a resend'),
    resend: z.boolean().describe('true for an attempt of POST /webhooks/events/{eventId}/redeliver'),
    attemptedAt: z.string().describe('ISO 8601 time the attempt started'),
    responseStatus: z
      .number()
      .int()
      .nullable()
      .describe('HTTP status the receiver answered; null when it did not answer (refused, timed out)'),
    durationMs: z.number().int().describe('Milliseconds from the start of the attempt to the end of the answer (or the failure)'),
    error: z.string().nullable().describe('Why the attempt failed, in a few words (never a secret); null when it succeeded'),
    nextRetryAt: z.string().nullable().describe('ISO 8601 time the next attempt is due; null after a success, and when no retry is left'),
  }),
  { title: 'WebhookAttempt' },
);
export type WebhookAttempt = z.infer<typeof WebhookAttemptSchema>;

export const WebhookEventLogSchema = withOpenApi(
  z.object({
    eventId: z.string().describe('The webhook-id header of every attempt of this event'),
    type: z.enum(WEBHOOK_EVENT_TYPES).describe('The event: capture.succeeded, capture.failed, batch.completed or batch.cancelled'),
    jobId: z.string().uuid().optional().describe("The async job the event reports (absent for a batch's event)"),
    batchId: z.string().uuid().optional().describe("The batch the event reports (absent for a job's event)"),
    url: z.string().describe('Where it is delivered: the webhookUrl, with query values that look like secrets masked'),
    createdAt: z.string().describe('ISO 8601 time the event was queued'),
    status: z
      .enum(WEBHOOK_EVENT_STATUSES)
      .describe('queued (no attempt yet), delivered (an attempt got a 2xx), retrying (a retry is due) or failed (no retry left)'),
    attempts: z.array(WebhookAttemptSchema).describe('Every attempt, oldest first'),
  }),
  { title: 'WebhookEventLog' },
);
export type WebhookEventLog = z.infer<typeof WebhookEventLogSchema>;

const uuidOf = (field: string, what: string) =>
  z
    .string({ errorMap: () => ({ message: `${field} must be a string` }) })
    .uuid(`${field} must be the UUID of ${what}`)
    .optional();

/** Exactly one subject: the events of one job or of one batch. */
export const WebhookEventsQuerySchema = z
  .object({
    jobId: uuidOf('jobId', 'an async job (the jobId answered by POST /captures)').describe(
      "An async job's id: its webhook's events (give jobId or batchId)",
    ),
    batchId: uuidOf('batchId', 'a batch (the batchId answered by POST /captures/bulk)').describe(
      "A batch's id: the batch webhook's events (give jobId or batchId)",
    ),
    apiKey: z.string().optional().describe('API key; may instead be sent in header X-API-Key.'),
  })
  .strict()
  .superRefine((query, ctx) => {
    if (query.jobId === undefined && query.batchId === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['jobId'],
        message: 'Give jobId (an async job) or batchId (a batch)',
        params: MISSING_FIELD_PARAM,
      });
    } else if (query.jobId !== undefined && query.batchId !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['batchId'], message: 'Give only one of jobId or batchId' });
    }
  });
export type WebhookEventsQuery = z.infer<typeof WebhookEventsQuerySchema>;

export const WebhookEventListSchema = withOpenApi(
  z.object({
    success: z.literal(true),
    data: z.object({
      events: z.array(WebhookEventLogSchema).describe('The events of the job or batch, oldest first; empty when it has no webhook'),
    }),
  }),
  { title: 'WebhookEventList' },
);

export const WebhookRedeliveryAcceptedSchema = withOpenApi(
  z.object({
    success: z.literal(true),
    data: WebhookEventLogSchema.describe('The event as it stands: the new attempt appears once it is made'),
  }),
  { title: 'WebhookRedeliveryAccepted' },
);

const authHeaders = z.object({
  'x-api-key': z.string().optional().describe('API key (alternative to the apiKey query parameter)'),
});

const eventIdParam = z.object({
  eventId: z.string().describe('The eventId of GET /webhooks/events, which is the webhook-id header, e.g. msg_5f0c6a9e-…'),
});

export const webhooksContract = c.router({
  listWebhookEvents: {
    method: 'GET',
    path: '/webhooks/events',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: "A job's or a batch's webhook events, each with its attempts: time, response status, duration, next retry",
    description:
      'Give jobId or batchId. Read with any key of the organization; costs nothing and is not rate limited. Events are kept as long as their job or batch (JOB_RESULT_TTL_SECONDS). 404 NOT_FOUND for an unknown id or one of another organization. Needs REDIS_URL on the server (503 otherwise).',
    query: WebhookEventsQuerySchema,
    headers: authHeaders,
    responses: {
      200: WebhookEventListSchema,
      400: ErrorBodySchema,
      401: ErrorBodySchema,
      404: ErrorBodySchema,
      500: ErrorBodySchema,
      503: ErrorBodySchema,
    },
  },
  redeliverWebhookEvent: {
    method: 'POST',
    path: '/webhooks/events/:eventId/redeliver',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'Send a webhook event again: the same webhook-id and the same body, freshly signed',
    description:
      "Queues one more attempt of the event to its webhookUrl, whatever became of the earlier ones: the same webhook-id and body bytes, a new webhook-timestamp and signature (the key's current signing secret). A resend is one attempt, without retries; it shows in GET /webhooks/events once made. 404 NOT_FOUND for an event of another organization. Needs REDIS_URL.",
    pathParams: eventIdParam,
    body: c.noBody(),
    headers: authHeaders,
    responses: {
      202: WebhookRedeliveryAcceptedSchema,
      401: ErrorBodySchema,
      404: ErrorBodySchema,
      500: ErrorBodySchema,
      503: ErrorBodySchema,
    },
  },
});

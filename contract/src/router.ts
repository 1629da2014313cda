import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { CaptureBodySchema, CaptureQuerySchema } from './capture.js';
import { CaptureResultSchema } from './capture-result.js';
import { ErrorBodySchema } from './errors.js';
import { AsyncCaptureAcceptedSchema, AsyncCaptureBodySchema, CaptureJobSchema } from './jobs.js';
import { UsageQuerySchema, UsageReportSchema } from './usage.js';
import { BatchSchema, BulkAcceptedSchema, BulkCaptureBodySchema } from './bulk.js';
import { CaptureLogPageSchema, CaptureLogQuerySchema } from './request-log.js';
import { monitorsContract } from './monitor-routes.js';
import { webhooksContract } from './webhooks.js';
import { withRoutePolicies, type RoutePolicy } from './route-policy.js';

const c = initContract();

const authHeaders = z.object({
  'x-api-key': z.string().optional().describe('API key (alternative to the apiKey query parameter)'),
});
const captureHeaders = authHeaders.extend({
  'x-openai-api-key': z.string().optional().describe('Analysis-provider key (preferred over openaiApiKey). Never stored.'),
});

/**
 * The 200 of a capture is the file itself (Content-Type per format) or, with returnFile=false, the
 * JSON CaptureResult. ts-rest has one schema per status, so the JSON form is declared here and the
 * OpenAPI generator adds the binary media types (scripts/generate-openapi.ts).
 */
const captureResponses = {
  200: CaptureResultSchema,
  400: ErrorBodySchema,
  401: ErrorBodySchema,
  402: ErrorBodySchema,
  403: ErrorBodySchema,
  // PAGE_MEMORY_LIMIT: the page's renderer used more than RENDERER_MEMORY_LIMIT_MB and was ended; nothing charged.
  // CAPTURE_BLANK (failOnBlank), NO_CONTENT and CONTENT_TOO_LARGE (content formats).
  422: ErrorBodySchema,
  429: ErrorBodySchema,
  500: ErrorBodySchema,
  // AI_RESULT_INVALID: the model's answer does not match openaiSchema.
  // TARGET_HTTP_ERROR: failOnHttpError and a 4xx/5xx target.
  502: ErrorBodySchema,
  503: ErrorBodySchema,
  504: ErrorBodySchema,
};

export const captureContract = c.router({
  capture: {
    method: 'GET',
    path: '/capture',
    // A signed link (docs/signed-links.md) is a GET: the POST form below takes a key only.
    metadata: { auth: 'key-or-signed-link', rateLimited: true, logRefusalsAs: 'sync' } satisfies RoutePolicy,
    summary: 'Capture a web page or inline HTML as PNG, WebP, JPEG or PDF',
    description:
      'Renders exactly one of `url` or `html` in headless Chromium. Returns the file (default) or, with returnFile=false, JSON with base64 data. Each successful capture consumes 1 credit; failures consume none.',
    query: CaptureQuerySchema,
    headers: captureHeaders,
    responses: captureResponses,
  },
  captureWithBody: {
    method: 'POST',
    path: '/capture',
    metadata: { auth: 'key', rateLimited: true, logRefusalsAs: 'sync' } satisfies RoutePolicy,
    summary: 'Capture, with the options as a JSON body (for html too large for a URL)',
    description: 'Same fields, rules and responses as GET /capture; the fields travel as a JSON object.',
    body: CaptureBodySchema,
    headers: captureHeaders,
    responses: captureResponses,
  },
});

export const usageContract = c.router({
  usage: {
    method: 'GET',
    path: '/usage',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'Credit balance and capture rate limit of the organization that owns the API key',
    description:
      'Credits of the current billing period and the capture rate limit of the organization that owns the API key. Costs nothing and is not rate limited.',
    query: UsageQuerySchema,
    headers: authHeaders,
    responses: {
      200: UsageReportSchema,
      400: ErrorBodySchema,
      401: ErrorBodySchema,
      403: ErrorBodySchema,
      500: ErrorBodySchema,
      503: ErrorBodySchema,
    },
  },
});

/** The request log: every capture of the organization, newest first. */
export const requestLogContract = c.router({
  listCaptures: {
    method: 'GET',
    path: '/captures',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'The request log: every capture of the organization (sync, async, batch item, MCP, monitor), newest first',
    description:
      "Each capture with its time, API key, target (query values masked as in the server log), format, outcome, HTTP status, error code, credits and duration, filtered by status, keyId and time (from, to) and read a page at a time (cursor). Captures refused before any credit was reserved (bad input, no credits, the rate limit) are listed as refused; a flood of refusals from one key is logged at most REQUEST_LOG_REFUSALS_PER_MINUTE a minute. Kept for REQUEST_LOG_RETENTION_DAYS (30 by default). Any key of the organization reads the whole organization's log. Costs nothing and is not rate limited.",
    query: CaptureLogQuerySchema,
    headers: authHeaders,
    responses: {
      200: CaptureLogPageSchema,
      400: ErrorBodySchema,
      401: ErrorBodySchema,
      403: ErrorBodySchema,
      500: ErrorBodySchema,
      503: ErrorBodySchema,
    },
  },
});

/** Async captures (`POST /captures`): queued on BullMQ, rendered by any worker, reported by webhook. */
export const jobsContract = c.router({
  createCaptureJob: {
    method: 'POST',
    path: '/captures',
    // Queuing a job counts against the organization's capture rate limit; polling it does not.
    metadata: { auth: 'key', rateLimited: true, logRefusalsAs: 'async' } satisfies RoutePolicy,
    summary: 'Queue a capture; poll it or get a signed webhook when it ends',
    description:
      'Takes every capture parameter except returnFile as a JSON body, plus an optional webhookUrl. Validation, the rate limit and a credit check happen before the job is queued, with the same answers as /capture. Credits are charged when the job succeeds, never for a failed job. Needs REDIS_URL on the server (503 otherwise).',
    body: AsyncCaptureBodySchema,
    headers: captureHeaders,
    responses: {
      202: AsyncCaptureAcceptedSchema,
      400: ErrorBodySchema,
      401: ErrorBodySchema,
      402: ErrorBodySchema,
      429: ErrorBodySchema,
      500: ErrorBodySchema,
      503: ErrorBodySchema,
    },
  },
  getCaptureJob: {
    method: 'GET',
    path: '/captures/:jobId',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'State of an async capture: queued, active, succeeded (with its result) or failed (with its error)',
    description:
      'Polled with the same API key (any key of the organization) that queued the job. Costs nothing and is not rate limited. 404 NOT_FOUND for an unknown id or a job of another organization.',
    pathParams: z.object({ jobId: z.string().describe('The jobId answered by POST /captures') }),
    headers: authHeaders,
    responses: { 200: CaptureJobSchema, 401: ErrorBodySchema, 404: ErrorBodySchema, 500: ErrorBodySchema, 503: ErrorBodySchema },
  },
  getCaptureJobFile: {
    method: 'GET',
    path: '/captures/:jobId/file',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'The file of a succeeded async capture, with the same headers as a binary /capture',
    description:
      'Kept for JOB_RESULT_TTL_SECONDS (default 24 hours). 409 JOB_NOT_FINISHED while the job is queued or active or when it failed.',
    pathParams: z.object({ jobId: z.string().describe('The jobId answered by POST /captures') }),
    headers: authHeaders,
    responses: {
      200: c.otherResponse({ contentType: 'application/octet-stream', body: c.type<Blob>() }),
      401: ErrorBodySchema,
      404: ErrorBodySchema,
      409: ErrorBodySchema,
      500: ErrorBodySchema,
      503: ErrorBodySchema,
    },
  },
  cancelCaptureJob: {
    method: 'DELETE',
    path: '/captures/:jobId',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'Cancel an async capture that has not ended: it fails with code CANCELLED and is never charged',
    description:
      'A queued job leaves the queue; one being rendered loses its result and releases its credits. Its webhook, when one was given, reports capture.failed with code CANCELLED; an item of a batch counts as cancelled there. A job that has already ended is answered as it is. 404 NOT_FOUND for an unknown id or a job of another organization.',
    pathParams: z.object({ jobId: z.string().describe('The jobId answered by POST /captures') }),
    body: c.noBody(),
    headers: authHeaders,
    responses: { 200: CaptureJobSchema, 401: ErrorBodySchema, 404: ErrorBodySchema, 500: ErrorBodySchema, 503: ErrorBodySchema },
  },
});

/** Bulk captures (docs/bulk.md): a batch of async jobs on the same queue, tracked and cancelled together. */
export const bulkContract = c.router({
  createCaptureBatch: {
    method: 'POST',
    path: '/captures/bulk',
    // A batch counts as one request against the rate limit (its items are checked for credits).
    metadata: { auth: 'key', rateLimited: true, logRefusalsAs: 'batch' } satisfies RoutePolicy,
    summary: 'Queue many captures at once: each item is an async job of its own, the batch is tracked as one',
    description:
      'Body: {defaults?, requests: [...], webhookUrl?}. Every item (defaults laid under it) is validated with the rules of POST /captures before anything is queued: one bad item answers 400 naming requests[i].field, and nothing is queued or charged. A credit check covers the whole batch. Each item is charged on its own success. Counts against the rate limit as one request. Needs REDIS_URL.',
    body: BulkCaptureBodySchema,
    headers: captureHeaders,
    responses: {
      202: BulkAcceptedSchema,
      400: ErrorBodySchema,
      401: ErrorBodySchema,
      402: ErrorBodySchema,
      429: ErrorBodySchema,
      500: ErrorBodySchema,
      503: ErrorBodySchema,
    },
  },
  getCaptureBatch: {
    method: 'GET',
    path: '/captures/bulk/:batchId',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: "State of a batch: status, counts and each item's job status and link",
    description:
      'queued until an item starts, running while any item is queued or rendering, completed when every item has ended (succeeded or failed), cancelled after DELETE. Each item names its async job (GET /captures/{jobId}) and, once succeeded, the link to its file. Costs nothing.',
    pathParams: z.object({ batchId: z.string().describe('The batchId answered by POST /captures/bulk') }),
    headers: authHeaders,
    responses: { 200: BatchSchema, 401: ErrorBodySchema, 404: ErrorBodySchema, 500: ErrorBodySchema, 503: ErrorBodySchema },
  },
  cancelCaptureBatch: {
    method: 'DELETE',
    path: '/captures/bulk/:batchId',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'Cancel a batch: items not yet ended are cancelled (never charged); finished ones keep their files',
    description:
      'Items still queued or rendering end as cancelled with code CANCELLED and charge nothing; items that already succeeded keep their files and charges. The batch webhook, when one was given, reports batch.cancelled.',
    pathParams: z.object({ batchId: z.string().describe('The batchId answered by POST /captures/bulk') }),
    body: c.noBody(),
    headers: authHeaders,
    responses: { 200: BatchSchema, 401: ErrorBodySchema, 404: ErrorBodySchema, 500: ErrorBodySchema, 503: ErrorBodySchema },
  },
});

/** Every route declares its RoutePolicy (`metadata`): a route without one does not compile. */
export const contract = withRoutePolicies(
  c.router(
    {
      ...captureContract,
      ...usageContract,
      ...requestLogContract,
      ...jobsContract,
      ...bulkContract,
      ...webhooksContract,
      ...monitorsContract,
    },
    { strictStatusCodes: true },
  ),
);
export type Contract = typeof contract;

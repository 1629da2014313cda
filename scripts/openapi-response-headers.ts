import type { HeaderObject } from 'openapi3-ts';

/**
 * Every response header the service sends, and on which responses: the one table the OpenAPI
 * generator reads. To document a new header, add a row here (then `npm run openapi`).
 *
 * - `operations`: operationIds that send it (`*` for all).
 * - `statuses`: response statuses that carry it (`*` for all the operation declares).
 * - `binaryOnly`: sent only with the file itself (returnFile=true), not the JSON form.
 */
export interface ResponseHeaderRow {
  name: string;
  description: string;
  schema: HeaderObject['schema'];
  operations: readonly string[] | '*';
  statuses: readonly string[] | '*';
}

const CAPTURE = ['capture', 'captureWithBody'] as const;
/** /capture and the file of an async capture job, which repeats what the capture saw. */
const CAPTURE_FILE = [...CAPTURE, 'getCaptureJobFile'] as const;
/** Responses of /capture that pass authentication, where the throttle has counted the request. */
const THROTTLED = ['200', '400', '402', '403', '422', '429', '500', '502', '503', '504'] as const;
/** POST /captures passes the same throttle before its validation (server/src/http/app.ts). */
const THROTTLED_JOB = ['202', '400', '402', '429', '500', '503'] as const;
const THROTTLED_OPERATIONS = [...CAPTURE, 'createCaptureJob'] as const;

export const RESPONSE_HEADERS: readonly ResponseHeaderRow[] = [
  {
    name: 'X-Request-Id',
    description: 'Identifier of this request, also in the server log.',
    schema: { type: 'string', format: 'uuid' },
    operations: '*',
    statuses: '*',
  },
  {
    name: 'X-RateLimit-Limit',
    description: 'Capture requests allowed per window for the organization.',
    schema: { type: 'integer' },
    operations: THROTTLED_OPERATIONS,
    statuses: [...THROTTLED, ...THROTTLED_JOB],
  },
  {
    name: 'X-RateLimit-Remaining',
    description: 'Capture requests left in the current window.',
    schema: { type: 'integer' },
    operations: THROTTLED_OPERATIONS,
    statuses: [...THROTTLED, ...THROTTLED_JOB],
  },
  {
    name: 'X-RateLimit-Reset',
    description: 'Unix epoch seconds when the window resets.',
    schema: { type: 'integer' },
    operations: THROTTLED_OPERATIONS,
    statuses: [...THROTTLED, ...THROTTLED_JOB],
  },
  {
    name: 'Retry-After',
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer' },
    operations: '*',
    statuses: ['429', '503'],
  },
  { name: 'Content-Length', description: 'Size of the body in bytes.', schema: { type: 'integer' }, operations: '*', statuses: ['200'] },
  {
    name: 'Content-Disposition',
    description: 'With the file: inline; filename="<fileName>".',
    schema: { type: 'string' },
    operations: CAPTURE_FILE,
    statuses: ['200'],
  },
  {
    name: 'X-Capture-Request-Id',
    description: "The request id of the render that made this file (the job's capture), as in the ledger and the server log.",
    schema: { type: 'string', format: 'uuid' },
    operations: ['getCaptureJobFile'],
    statuses: ['200'],
  },
  {
    name: 'Location',
    description: 'Where to poll the job: /captures/{jobId}.',
    schema: { type: 'string' },
    operations: ['createCaptureJob'],
    statuses: ['202'],
  },
  {
    name: 'Server-Timing',
    description: 'Time per capture stage, e.g. queue;dur=3, render;dur=412.',
    schema: { type: 'string' },
    operations: CAPTURE,
    statuses: ['200'],
  },
  {
    name: 'X-Cache',
    description: 'HIT when served from the response cache, MISS otherwise; only with cacheEnabled=true.',
    schema: { type: 'string', enum: ['HIT', 'MISS'] },
    operations: CAPTURE,
    statuses: ['200'],
  },
  {
    name: 'X-Storage-Url',
    description: 'Address of the uploaded copy; only with requestStorageEnabled=true.',
    schema: { type: 'string', format: 'uri' },
    operations: CAPTURE,
    statuses: ['200'],
  },
  {
    name: 'X-Capture-Truncated',
    description:
      'true when the image was cut to the full-page budget (FULL_PAGE_MAX_HEIGHT_PX / FULL_PAGE_MAX_PIXELS), else false; also data.page.truncated.',
    schema: { type: 'string', enum: ['true', 'false'] },
    operations: CAPTURE_FILE,
    statuses: ['200'],
  },
  {
    name: 'X-Capture-Wait-Timed-Out',
    description:
      'true when waitUntil was not reached within its budget and the page was captured as it was (best attempt; failOnWaitTimeout=true answers 504 instead), else false; also data.page.waitTimedOut.',
    schema: { type: 'string', enum: ['true', 'false'] },
    operations: CAPTURE_FILE,
    statuses: ['200'],
  },
  {
    name: 'X-Capture-Inspection-Timed-Out',
    description:
      'true when reading the page after its file did not end within the deadline and a short grace: the file is delivered and charged as it was taken, the page report, quality report and metadata are not read (data.page.inspectionTimedOut), else false.',
    schema: { type: 'string', enum: ['true', 'false'] },
    operations: CAPTURE_FILE,
    statuses: ['200'],
  },
  {
    name: 'X-Capture-Still-Growing',
    description:
      'true when fullPageScroll stopped at fullPageScrollDuration or the full-page height budget while the page was still growing, or when the page got taller while it was taken (after one retake of a full page), else false; also data.page.stillGrowing and the quality finding stillGrowing.',
    schema: { type: 'string', enum: ['true', 'false'] },
    operations: CAPTURE_FILE,
    statuses: ['200'],
  },
  {
    name: 'X-Target-Status',
    description:
      'url captures and their job files: HTTP status of the main document of the page the browser ended on, after redirects and navigations after load (also data.page.status); on failures too where the target answered (502 TARGET_HTTP_ERROR, 403 TARGET_PROTECTED, 504); absent for html.',
    schema: { type: 'integer', minimum: 100, maximum: 599 },
    operations: CAPTURE_FILE,
    statuses: ['200', '403', '502', '504'],
  },
  {
    name: 'X-Final-Url',
    description:
      'url captures and their job files: the URL of the captured document after redirects and navigations after load, credentials removed (also data.page.finalUrl); on failures, the address that failed or the page reached; absent for html.',
    schema: { type: 'string', format: 'uri' },
    operations: CAPTURE_FILE,
    statuses: ['200', '403', '500', '502', '504'],
  },
  {
    name: 'X-Capture-Quality',
    description: 'ok when the capture quality report found nothing, warn otherwise (data.quality has the findings).',
    schema: { type: 'string', enum: ['ok', 'warn'] },
    operations: CAPTURE,
    statuses: ['200'],
  },
  {
    name: 'X-Capture-Quality-Findings',
    description:
      'Comma-separated checks that found something (blank, imagesNotLoaded, overlay, fontsFailed, stillGrowing); absent when the report is ok.',
    schema: { type: 'string' },
    operations: CAPTURE,
    statuses: ['200'],
  },
  {
    name: 'X-Capture-Sha256',
    description: 'With metadata=true: lowercase hex sha256 of the file (also data.metadata.sha256).',
    schema: { type: 'string' },
    operations: CAPTURE,
    statuses: ['200'],
  },
  {
    name: 'X-Page-Title',
    description: 'With metadata=true: the page title, header-safe (non-ASCII and % percent-encoded), cut to 256 bytes.',
    schema: { type: 'string' },
    operations: CAPTURE,
    statuses: ['200'],
  },
  {
    name: 'X-Page-Language',
    description: 'With metadata=true: the page language (lang attribute, else Content-Language), when it is a language tag.',
    schema: { type: 'string' },
    operations: CAPTURE,
    statuses: ['200'],
  },
  {
    name: 'X-Service-AI-Result',
    description: 'With the file: the analysis text, header-safe and cut to fit; only with openaiPrompt.',
    schema: { type: 'string' },
    operations: CAPTURE,
    statuses: ['200'],
  },
  {
    name: 'X-Service-AI-Result-Truncated',
    description: 'With the file: true when X-Service-AI-Result was cut (the JSON form has the full text).',
    schema: { type: 'string', enum: ['true', 'false'] },
    operations: CAPTURE,
    statuses: ['200'],
  },
];

function applies(list: readonly string[] | '*', value: string): boolean {
  return list === '*' || list.includes(value);
}

/** The headers of one response of one operation, in table order. */
export function responseHeadersFor(operationId: string, status: string): Record<string, HeaderObject> {
  const rows = RESPONSE_HEADERS.filter((row) => applies(row.operations, operationId) && applies(row.statuses, status));
  return Object.fromEntries(rows.map((row) => [row.name, { description: row.description, schema: row.schema }]));
}

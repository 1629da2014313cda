import type { ErrorCode } from './errors.js';

/**
 * Examples the OpenAPI document shows (and Swagger UI pre-fills), kept apart from the schemas:
 * an `example` on a field is sent as a real value by "Try it out", so fields carry none; examples
 * live here, per operation and status, where they illustrate without being sent.
 */

/** The request body Swagger UI pre-fills for each JSON-body operation: a minimal capture that works. */
export const REQUEST_BODY_EXAMPLES: Record<string, Record<string, unknown>> = {
  captureWithBody: { url: 'https://example.com', format: 'png' },
  createCaptureJob: { url: 'https://example.com', format: 'png', fullPage: true },
  // Two items over shared defaults: one of each mode (url, html).
  createCaptureBatch: {
    defaults: { format: 'png', viewportWidth: 1280, viewportHeight: 800 },
    requests: [{ url: 'https://example.com' }, { html: '<h1>Hello</h1>' }],
  },
};

/** The error code an error status most often carries; an operation may name another below. */
const CODE_BY_STATUS: Record<string, ErrorCode> = {
  '400': 'VALIDATION_ERROR',
  '401': 'API_KEY_REQUIRED',
  '402': 'INSUFFICIENT_CREDITS',
  '403': 'TARGET_PROTECTED',
  '404': 'NOT_FOUND',
  '409': 'JOB_NOT_FINISHED',
  '429': 'RATE_LIMIT_EXCEEDED',
  '500': 'INTERNAL_ERROR',
  '502': 'TARGET_HTTP_ERROR',
  '503': 'SERVICE_UNAVAILABLE',
  '504': 'CAPTURE_TIMEOUT',
};

const CODE_BY_OPERATION: Record<string, Record<string, ErrorCode>> = {
  usage: { '400': 'NO_ORGANIZATION_CONTEXT', '403': 'MEMBERSHIP_INACTIVE' },
};

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  API_KEY_REQUIRED: 'API key required',
  INSUFFICIENT_CREDITS: 'Not enough credits: this capture costs 1, 0 remaining in the current period',
  TARGET_PROTECTED: 'The target answered with an anti-bot verification page; nothing was captured or charged',
  NOT_FOUND: 'No capture job with this id for this organization',
  JOB_NOT_FINISHED: 'The job is active; its file exists once it has succeeded',
  RATE_LIMIT_EXCEEDED: 'Rate limit exceeded: at most 40 capture requests per window; retry in 12 s',
  INTERNAL_ERROR: 'Internal error; the request id identifies it in the server log',
  TARGET_HTTP_ERROR: 'The target answered HTTP 404 and failOnHttpError is true; nothing was charged',
  SERVICE_UNAVAILABLE: 'Service temporarily unavailable; nothing was charged. Retry shortly.',
  CAPTURE_TIMEOUT: 'The capture did not finish within 30000 ms (waiting for: navigation); nothing was charged',
  NO_ORGANIZATION_CONTEXT: 'This API key belongs to no organization',
  MEMBERSHIP_INACTIVE: 'The user who owns this API key is not an active member of the organization',
};

/** The error body shown for one status of one operation; undefined for success statuses. */
export function errorExample(operationId: string, status: string): Record<string, unknown> | undefined {
  const code = CODE_BY_OPERATION[operationId]?.[status] ?? CODE_BY_STATUS[status];
  if (!code) return undefined;
  if (code === 'VALIDATION_ERROR') {
    return {
      success: false,
      error: {
        code,
        message: 'Validation failed: viewportWidth must be a number from 100 to 7680 (pixels)',
        details: [{ field: 'viewportWidth', message: 'viewportWidth must be a number from 100 to 7680 (pixels)', value: 'wide' }],
      },
    };
  }
  return { success: false, error: { code, message: MESSAGES[code] ?? code } };
}

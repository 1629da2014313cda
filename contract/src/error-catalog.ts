import type { ErrorCode } from './errors.js';

/**
 * Every error code with its HTTP status and when it is answered: the one table the server maps
 * errors with and the generated API reference lists. A new code must be added here (the type
 * makes that a compile error otherwise).
 */
export const ERROR_CATALOG: Record<ErrorCode, { status: number; when: string }> = {
  VALIDATION_ERROR: { status: 400, when: 'A parameter is invalid; `details` names each field, its valid values and the rejected value.' },
  MISSING_REQUIRED_FIELD: { status: 400, when: 'A required field is missing (for example neither `url` nor `html`).' },
  INVALID_INPUT: {
    status: 400,
    when: 'The input is well-formed but cannot be used (for example a destination the egress policy does not allow).',
  },
  NO_ORGANIZATION_CONTEXT: { status: 400, when: 'The API key belongs to no organization.' },
  HTTPS_REQUIRED: { status: 400, when: 'The deployment requires HTTPS and the request came over plain HTTP.' },
  API_KEY_REQUIRED: { status: 401, when: 'No API key was sent (query `apiKey` or header `X-API-Key`).' },
  INVALID_API_KEY: { status: 401, when: 'The API key is unknown or revoked.' },
  API_KEY_EXPIRED: { status: 401, when: 'The API key is past its expiry date.' },
  INVALID_SIGNATURE: { status: 401, when: 'A signed link does not verify.' },
  SIGNED_LINK_EXPIRED: { status: 401, when: 'A signed link is past its `expires` time.' },
  SIGNATURE_REQUIRED: { status: 401, when: 'The organization requires signed links and the key came in the query string.' },
  INSUFFICIENT_CREDITS: { status: 402, when: 'The organization has fewer credits left than the capture costs.' },
  TARGET_PROTECTED: {
    status: 403,
    when: 'The target answered with an anti-bot verification page (CAPTCHA or challenge); nothing is charged.',
  },
  MEMBERSHIP_INACTIVE: { status: 403, when: 'The user who owns the key is not an active member of the organization.' },
  QUOTA_EXCEEDED: {
    status: 403,
    when: "The organization already has its plan's number of a resource (monitors: `MONITORS_PER_ORGANIZATION` or the plan's own); `details` names the limit; nothing is created.",
  },
  NOT_FOUND: { status: 404, when: 'No such resource (for example an unknown job id, or a job of another organization).' },
  JOB_NOT_FINISHED: { status: 409, when: 'The file of an async capture was asked for before the job succeeded.' },
  CONCURRENCY_LIMIT_EXCEEDED: {
    status: 429,
    when: "The organization already has its plan's number of captures in progress; `Retry-After` says when to retry; nothing is charged.",
  },
  CAPTURE_BLANK: { status: 422, when: 'With `failOnBlank=true`, the capture came out blank (one colour); nothing is charged.' },
  NO_CONTENT: {
    status: 422,
    when: 'A content format (`html`, `markdown`, `text`, `mhtml`) found no content on the page; nothing is charged.',
  },
  CONTENT_TOO_LARGE: { status: 422, when: 'An `mhtml` snapshot is larger than its limit; nothing is charged.' },
  PAGE_MEMORY_LIMIT: {
    status: 422,
    when: 'The page used more memory than `RENDERER_MEMORY_LIMIT_MB` allows; its renderer was ended; `details.limitMb` gives the limit; nothing is charged.',
  },
  RATE_LIMIT_EXCEEDED: {
    status: 429,
    when: 'The organization has used its capture requests for the current window; `Retry-After` says when to retry.',
  },
  INTERNAL_ERROR: { status: 500, when: 'An unexpected fault in the service; nothing is charged.' },
  OPERATION_FAILED: { status: 500, when: 'The capture could not be completed; nothing is charged.' },
  TARGET_HTTP_ERROR: {
    status: 502,
    when: 'With `failOnHttpError=true`, the target answered with an HTTP error status; nothing is charged.',
  },
  AI_RESULT_INVALID: {
    status: 502,
    when: "The AI model's answer does not match the JSON Schema given in `openaiSchema`; the message lists the mismatches; nothing is charged.",
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    when: 'Overloaded, or a shared store is unreachable; `Retry-After` says when to retry; nothing is charged.',
  },
  PAGE_UNRESPONSIVE: {
    status: 504,
    when: "The page's main thread stopped answering (a busy script); the message names the stage; the renderer is ended and nothing is charged.",
  },
  CAPTURE_TIMEOUT: {
    status: 504,
    when: 'The capture did not finish within its deadline; the message names the stage that was waiting; nothing is charged.',
  },
};

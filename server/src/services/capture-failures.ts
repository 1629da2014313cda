import type { ErrorCode } from '@daguerre/contract';
import { ApiError } from '../errors.js';
import { CaptureError, CaptureTimeoutError, ClientGoneError, type CaptureErrorKind } from '../capture/capture-error.js';
import { targetHeadersOf } from '../capture/page/target-facts.js';

/** Chromium's network errors carry a stable, safe code (net::ERR_…): the caller may see it. */
const NET_ERROR = /net::ERR_[A-Z_]+/;
const BROWSER_GONE =
  /Target closed|Session closed|Connection closed|Protocol error|detached|browser has disconnected|Navigating frame was detached/i;

/**
 * The contract's code for each kind of CaptureError: the one place where the capture layer's words
 * become HTTP (docs/architecture.md). The status is the code's own (contract/src/error-catalog.ts);
 * a kind whose fault is 'input' maps to a 4xx, any other to a 5xx (tests/unit/capture-failures.test.ts).
 */
export const CAPTURE_ERROR_CODES: Record<CaptureErrorKind, ErrorCode> = {
  'invalid-selector': 'VALIDATION_ERROR',
  'element-not-found': 'INVALID_INPUT',
  'element-not-visible': 'INVALID_INPUT',
  'element-not-clickable': 'INVALID_INPUT',
  'script-failed': 'INVALID_INPUT',
  'script-still-running': 'INVALID_INPUT',
  'destination-refused': 'INVALID_INPUT',
  'proxy-refused': 'INVALID_INPUT',
  'target-protected': 'TARGET_PROTECTED',
  'target-http-error': 'TARGET_HTTP_ERROR',
  'target-unreachable': 'OPERATION_FAILED',
  'over-memory': 'PAGE_MEMORY_LIMIT',
  'page-unresponsive': 'PAGE_UNRESPONSIVE',
  'page-crashed': 'OPERATION_FAILED',
  blank: 'CAPTURE_BLANK',
  'no-content': 'NO_CONTENT',
  'content-too-large': 'CONTENT_TOO_LARGE',
  'image-too-large': 'INVALID_INPUT',
  'video-too-large': 'INVALID_INPUT',
  'pdf-no-pages': 'INVALID_INPUT',
  'pdf-no-room': 'INVALID_INPUT',
  'empty-image': 'OPERATION_FAILED',
  'encode-failed': 'OPERATION_FAILED',
  'slots-full': 'SERVICE_UNAVAILABLE',
  'lane-busy': 'SERVICE_UNAVAILABLE',
  'filters-unavailable': 'SERVICE_UNAVAILABLE',
};

/** The answer for a CaptureError: its code from the table, its message, details and Retry-After as they are. */
function captureErrorAnswer(error: CaptureError): ApiError {
  return new ApiError(CAPTURE_ERROR_CODES[error.kind], error.message, {
    ...(error.details !== undefined ? { details: error.details } : {}),
    ...(error.logDetail !== undefined ? { logDetail: error.logDetail } : {}),
    ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
  });
}

/**
 * The answer for a capture that failed: an ApiError as it is, a CaptureError by its kind, a timeout
 * as 504 naming the stage, Chromium's own errors as 500s that say what happened without leaking
 * internals. Nothing is charged for any of them.
 */
export function captureFailure(error: unknown, budgetMs: number): ApiError {
  const answer = mapped(error, budgetMs);
  // What the renderer knew about the target (X-Target-Status, X-Final-Url) stays on the answer; the answer's own win.
  const known = targetHeadersOf(error);
  if (known && Object.keys(known).length > 0) answer.options.headers = { ...known, ...answer.options.headers };
  return answer;
}

function mapped(error: unknown, budgetMs: number): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof CaptureError) return captureErrorAnswer(error);
  if (error instanceof ClientGoneError) return new ApiError('OPERATION_FAILED', 'The client disconnected before the capture finished');
  if (error instanceof CaptureTimeoutError) {
    return new ApiError('CAPTURE_TIMEOUT', `The capture did not finish within ${budgetMs} ms (${error.message}); nothing was charged`);
  }
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new ApiError('CAPTURE_TIMEOUT', `The capture did not finish within ${budgetMs} ms while loading the page; nothing was charged`, {
      logDetail: error,
    });
  }
  const net = NET_ERROR.exec(message);
  if (net) return new ApiError('OPERATION_FAILED', `The page could not be loaded (${net[0]}); nothing was charged`, { logDetail: error });
  if (BROWSER_GONE.test(message)) {
    return new ApiError('OPERATION_FAILED', 'The browser stopped during the capture; nothing was charged. Retry the request.', {
      logDetail: error,
    });
  }
  return new ApiError('OPERATION_FAILED', 'The capture failed; nothing was charged', { logDetail: error });
}

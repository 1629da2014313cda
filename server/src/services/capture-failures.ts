import { ApiError } from '../errors.js';
import { CaptureTimeoutError, ClientGoneError } from '../capture/capture-error.js';
import { targetHeadersOf, withTargetHeaders } from '../capture/page/target-facts.js';

/** Chromium's network errors carry a stable, safe code (net::ERR_…): the caller may see it. */
const NET_ERROR = /net::ERR_[A-Z_]+/;
const BROWSER_GONE = /Target closed|Session closed|Connection closed|Protocol error|detached|browser has disconnected|Navigating frame was detached/i;

/**
 * The answer for a capture that failed: an ApiError as it is, a timeout as 504 naming the stage,
 * Chromium's own errors as 500s that say what happened without leaking internals. Nothing is
 * charged for any of them.
 */
export function captureFailure(error: unknown, budgetMs: number): ApiError {
  // What the renderer knew about the target (X-Target-Status, X-Final-Url) stays on the answer.
  return withTargetHeaders(mapped(error, budgetMs), targetHeadersOf(error) ?? {});
}

function mapped(error: unknown, budgetMs: number): ApiError {
  if (error instanceof ApiError) return error;
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
    return new ApiError('OPERATION_FAILED', 'The browser stopped during the capture; nothing was charged. Retry the request.', { logDetail: error });
  }
  return new ApiError('OPERATION_FAILED', 'The capture failed; nothing was charged', { logDetail: error });
}

import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { RequestValidationError } from '@ts-rest/express';
import { ApiError } from '../errors.js';
import { bodyParserError } from './body-errors.js';
import { zodIssuesToApiError } from './validation.js';

export function sendError(res: Response, error: ApiError): void {
  res.locals.errorCode = error.code;
  if (error.options.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.options.retryAfterSeconds));
  // Header-safe: printable ASCII only (a URL's other characters percent-encoded).
  for (const [name, value] of Object.entries(error.options.headers ?? {})) res.setHeader(name, value.replace(/[^\x20-\x7e]/g, (c) => encodeURIComponent(c)));
  res.status(error.status).json(error.toBody());
}

/**
 * The one place where failures become the spec's error body. Client messages come from ApiError;
 * anything else is logged in full and answered with a generic 500 that echoes nothing.
 */
export function errorResponder(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof RequestValidationError) {
      sendError(res, zodIssuesToApiError(error.query ?? error.body ?? error.headers, error.query ? req.query : error.body ? req.body : req.headers));
      return;
    }
    // express.json() failures (too large, bad charset or encoding, not JSON): the client's error, logged as such.
    const bodyError = bodyParserError(error);
    if (bodyError) {
      logger.info({ requestId: res.locals.rendershot?.requestId, code: bodyError.code, status: bodyError.status, reason: (error as Error).message }, 'rejected request body');
      sendError(res, bodyError);
      return;
    }
    if (error instanceof ApiError) {
      if (error.status >= 500) logger.error({ err: error.options.logDetail ?? error, code: error.code, requestId: res.locals.rendershot?.requestId }, error.message);
      sendError(res, error);
      return;
    }
    logger.error({ err: error, requestId: res.locals.rendershot?.requestId }, 'unexpected error');
    sendError(res, new ApiError('INTERNAL_ERROR', 'Internal error; the request id identifies it in the server log'));
  };
}

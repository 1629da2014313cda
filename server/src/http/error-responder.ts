import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { RequestValidationError } from '@ts-rest/express';
import { ApiError } from '../errors.js';
import { bodyParserError } from './body-errors.js';
import { zodIssuesToApiError } from './validation.js';

/** Every 503 says when to come back (openapi.json declares Retry-After on each), 5 s unless the error knows better. */
const DEFAULT_UNAVAILABLE_RETRY_SECONDS = 5;

export function sendError(res: Response, error: ApiError): void {
  res.locals.errorCode = error.code;
  const retryAfter = error.options.retryAfterSeconds ?? (error.status === 503 ? DEFAULT_UNAVAILABLE_RETRY_SECONDS : undefined);
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  // Header-safe: printable ASCII only (a URL's other characters percent-encoded).
  for (const [name, value] of Object.entries(error.options.headers ?? {}))
    res.setHeader(
      name,
      value.replace(/[^\x20-\x7e]/g, (c) => encodeURIComponent(c)),
    );
  res.status(error.status).json(error.toBody());
}

/**
 * The one place where failures become the API's error body (docs/reference/api.md, "Error codes").
 * Client messages come from ApiError; anything else is logged in full and answered with a generic
 * 500 that echoes nothing.
 */
export function errorResponder(logger: Logger): ErrorRequestHandler {
  const respond = answer(logger);
  return (error, req, res, next) => {
    try {
      respond(error, req, res, next);
    } catch (failure) {
      // Never Express's own HTML page with a stack and paths: whatever failed while answering (a
      // body too strange to describe, say), the client gets the JSON error body with a 500.
      try {
        logger.error({ err: failure, requestId: res.locals.daguerre?.requestId }, 'error responder failed');
      } catch {
        // Not even loggable: the answer below still goes out.
      }
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res
        .status(500)
        .type('application/json')
        .send(JSON.stringify(new ApiError('INTERNAL_ERROR', 'Internal error; the request id identifies it in the server log').toBody()));
    }
  };
}

function answer(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof RequestValidationError) {
      sendError(
        res,
        zodIssuesToApiError(error.query ?? error.body ?? error.headers, error.query ? req.query : error.body ? req.body : req.headers),
      );
      return;
    }
    // express.json() failures (too large, bad charset or encoding, not JSON): the client's error, logged as such.
    const bodyError = bodyParserError(error);
    if (bodyError) {
      // The parser's type, not its message: JSON.parse quotes the body it failed on, and a body may hold a key.
      logger.info(
        {
          requestId: res.locals.daguerre?.requestId,
          code: bodyError.code,
          status: bodyError.status,
          reason: (error as { type?: string }).type ?? 'decoding',
        },
        'rejected request body',
      );
      sendError(res, bodyError);
      return;
    }
    if (error instanceof ApiError) {
      if (error.status >= 500)
        logger.error({ err: error.options.logDetail ?? error, code: error.code, requestId: res.locals.daguerre?.requestId }, error.message);
      sendError(res, error);
      return;
    }
    logger.error({ err: error, requestId: res.locals.daguerre?.requestId }, 'unexpected error');
    sendError(res, new ApiError('INTERNAL_ERROR', 'Internal error; the request id identifies it in the server log'));
  };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { redactUrl } from '../logger.js';

/**
 * One JSON line per request, carrying the request id that the response also returns. Only the
 * method, the URL with its secret query values redacted, the status and the time are logged:
 * headers (keys, cookies, custom headers) never are.
 */
export function requestLogger(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId: (_req: IncomingMessage, res: ServerResponse) =>
      (res as ServerResponse & { locals: { daguerre: { requestId: string } } }).locals.daguerre.requestId,
    customProps: (_req, res) => ({
      requestId: (res as ServerResponse & { locals: { daguerre: { requestId: string } } }).locals.daguerre.requestId,
    }),
    serializers: {
      req: (req: { method: string; url: string }) => ({ method: req.method, url: redactUrl(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    autoLogging: { ignore: (req) => req.url === '/health' || req.url === '/metrics' },
  }) as unknown as RequestHandler;
}

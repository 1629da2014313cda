import { FORMATS, type CaptureKind, type CaptureLogQuery } from '@daguerre/contract';
import type { Request, RequestHandler, Response } from 'express';
import { isMcpLoopback } from '../mcp/loopback.js';
import { loggableTarget, type RequestLog } from '../services/request-log.js';
import { contextOf } from './request-context.js';

/**
 * Sent by Daguerre's own MCP server (stdio) so its captures are told apart in the request log. A
 * label only: it grants nothing, so a caller who sends it merely labels its own captures.
 */
export const CLIENT_LABEL_HEADER = 'x-daguerre-client';

/** Which face a capture request came through: the /mcp endpoint's loopback calls and the MCP server's are `mcp`. */
export function captureKindOf(req: Pick<Request, 'get'>, plain: CaptureKind): CaptureKind {
  return isMcpLoopback(req) || req.get(CLIENT_LABEL_HEADER) === 'mcp' ? 'mcp' : plain;
}

/** `GET /captures`: one page of the organization's request log. */
export function requestLogHandler(log: RequestLog) {
  return async ({ query, res }: { query: CaptureLogQuery; res: Response }) => {
    const { apiKey: _key, ...filters } = query;
    const organizationId = contextOf(res).auth!.organizationId!;
    return { status: 200 as const, body: { success: true as const, data: await log.page(organizationId, filters) } };
  };
}

const knownFormat = (value: unknown): string => {
  if (value === undefined) return 'png';
  return typeof value === 'string' && (FORMATS as readonly string[]).includes(value) ? value : 'invalid';
};

/**
 * Logs a capture request answered with an error before it reserved anything (bad input, the rate
 * limit, no credits, a refused destination): the capture's own ledger row covers every other end,
 * and the repository ignores a refusal whose request already has one. Runs when the answer has
 * been sent, off the request's path.
 */
export function recordRefusals(log: RequestLog, kind: (req: Request) => CaptureKind): RequestHandler {
  return (req, res, next) => {
    const started = Date.now();
    res.once('finish', () => {
      const auth = contextOf(res).auth;
      if (res.statusCode < 400 || !auth?.organizationId) return;
      const fields = (req.method === 'GET' ? req.query : req.body) as Record<string, unknown> | undefined;
      const url = typeof fields?.url === 'string' ? fields.url : undefined;
      const bulk = Array.isArray(fields?.requests);
      // refused() logs a write that failed and never rejects (services/request-log.ts).
      void log.refused({
        requestId: contextOf(res).requestId,
        organizationId: auth.organizationId,
        apiKeyId: auth.keyId,
        kind: kind(req),
        format: bulk ? 'bulk' : knownFormat(fields?.format),
        source: fields?.html !== undefined && url === undefined ? 'html' : 'url',
        target: url !== undefined && !bulk ? loggableTarget(url) : null,
        errorCode: String(res.locals.errorCode ?? 'INTERNAL_ERROR'),
        httpStatus: res.statusCode,
        durationMs: Date.now() - started,
        at: started,
      });
    });
    next();
  };
}

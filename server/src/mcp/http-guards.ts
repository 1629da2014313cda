import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { JSON_BODY_LIMIT, jsonDepth, MAX_JSON_DEPTH } from '../json-limits.js';

/**
 * What /mcp checks before the MCP SDK sees a request, each refusal as a JSON-RPC error (what an
 * MCP client parses), never the REST error body: the Origin (DNS-rebinding protection the
 * streamable HTTP transport asks servers for) and the body (JSON, then a JSON-RPC message).
 * docs/mcp.md, "Errors", lists them.
 */

/** JSON-RPC 2.0's codes, and -32001 for the key (the MCP SDK's servers use it for "unauthorized" too). */
export const JSON_RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  internalError: -32603,
  serverError: -32000,
  unauthorized: -32001,
} as const;

/** The id of the request a refusal answers, when the body had a usable one (JSON-RPC: null otherwise). */
function requestIdOf(body: unknown): string | number | null {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const id = (body as { id?: unknown }).id;
    if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) return id;
  }
  return null;
}

export function sendJsonRpcError(
  res: Response,
  status: number,
  code: number,
  message: string,
  data?: Record<string, unknown>,
  id: string | number | null = null,
): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id });
}

/** The origin the service itself is reached at by this request (behind a trusted proxy, the proxy's). */
function ownOrigin(req: Request, trustProxy: boolean): string | undefined {
  const forwarded = trustProxy ? req.get('x-forwarded-host')?.split(',')[0]?.trim() : undefined;
  const host = forwarded || req.get('host');
  if (!host) return undefined;
  try {
    return new URL(`${req.protocol}://${host}`).origin;
  } catch {
    return undefined;
  }
}

/**
 * Origin, as the MCP transport rules ask: a request without one (an MCP host, an SDK, curl) passes,
 * as does the service's own origin and any listed in MCP_ALLOWED_ORIGINS; any other, `null`
 * included, is refused with 403 before the key is looked at. A rebinding page shares the service's
 * host name, so its requests look same-origin: what stops it is the key, which a browser never sends
 * on its own (no cookie authenticates /mcp).
 */
export function checkOrigin(options: { allowedOrigins: readonly string[]; trustProxy: boolean }): RequestHandler {
  return (req, res, next) => {
    const origin = req.get('origin');
    if (origin === undefined || options.allowedOrigins.includes(origin) || origin === ownOrigin(req, options.trustProxy)) {
      next();
      return;
    }
    sendJsonRpcError(
      res,
      403,
      JSON_RPC.serverError,
      `Forbidden: Origin ${JSON.stringify(origin.slice(0, 200))} may not call this MCP endpoint; the operator lists browser origins allowed besides the service's own in MCP_ALLOWED_ORIGINS`,
      {
        code: 'ORIGIN_NOT_ALLOWED',
      },
    );
  };
}

/** Read from the header itself: Express's req.is() answers null for an empty body, which is a parse error here, not a media type one. */
function isJsonContentType(req: Request): boolean {
  const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

const readRaw = express.raw({ type: () => true, limit: JSON_BODY_LIMIT });

/**
 * The body as JSON-RPC: Content-Type JSON (else 415), within the size and nesting limits of the API's
 * JSON bodies (413, or -32700), JSON that parses (-32700, HTTP 400) and a JSON-RPC message or a
 * non-empty batch of them (-32600, HTTP 400). The parsed value is left in req.body for the SDK.
 */
export function jsonRpcBody(): RequestHandler[] {
  const contentType: RequestHandler = (req, res, next) => {
    if (isJsonContentType(req)) next();
    else
      sendJsonRpcError(
        res,
        415,
        JSON_RPC.invalidRequest,
        'Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json',
      );
  };
  const parse = (req: Request, res: Response, next: NextFunction) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (jsonDepth(raw, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      sendJsonRpcError(
        res,
        400,
        JSON_RPC.parseError,
        `Parse error: the body is nested deeper than ${MAX_JSON_DEPTH} levels and was not parsed`,
      );
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
    } catch {
      sendJsonRpcError(
        res,
        400,
        JSON_RPC.parseError,
        raw.length === 0 ? 'Parse error: the body is empty; send one JSON-RPC message' : 'Parse error: the body is not valid JSON (UTF-8)',
      );
      return;
    }
    const messages = Array.isArray(body) ? body : [body];
    if (messages.length === 0 || !messages.every((message) => JSONRPCMessageSchema.safeParse(message).success)) {
      sendJsonRpcError(
        res,
        400,
        JSON_RPC.invalidRequest,
        messages.length === 0
          ? 'Invalid Request: an empty batch'
          : 'Invalid Request: not a JSON-RPC 2.0 message ({"jsonrpc": "2.0", "method": …, "id": …} with params an object, or a response or notification)',
        undefined,
        requestIdOf(body),
      );
      return;
    }
    req.body = body;
    next();
  };
  return [contentType, readRaw, parse];
}

/** body-parser's refusals (too large, an encoding it cannot undo, a body cut short) and anything else thrown on /mcp, as JSON-RPC. */
export function jsonRpcErrors(onUnexpected: (error: unknown, req: Request) => void): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const { status, type } = (error ?? {}) as { status?: number; type?: string };
    if (type === 'entity.too.large')
      sendJsonRpcError(
        res,
        413,
        JSON_RPC.invalidRequest,
        `Payload Too Large: the body may be at most ${JSON_BODY_LIMIT.replace('mb', ' MiB')}`,
      );
    else if (type === 'encoding.unsupported')
      sendJsonRpcError(res, 415, JSON_RPC.invalidRequest, 'Unsupported Content-Encoding: send identity, gzip, deflate or br');
    else if (typeof status === 'number' && status >= 400 && status < 500)
      sendJsonRpcError(
        res,
        400,
        JSON_RPC.parseError,
        'Parse error: the body could not be read (cut short, or not decodable with its Content-Encoding)',
      );
    else {
      onUnexpected(error, req);
      sendJsonRpcError(
        res,
        500,
        JSON_RPC.internalError,
        'Internal error: the request failed on the server; it was logged with its X-Request-Id',
      );
    }
  };
}

import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { createClient } from '@daguerre/client';
import { handle } from '../async-handler.js';
import { ApiError } from '../errors.js';
import type { ApiKeyService } from '../services/api-keys.js';
import type { InlineBudget } from './delivery.js';
import { checkOrigin, JSON_RPC, jsonRpcBody, jsonRpcErrors, sendJsonRpcError } from './http-guards.js';
import { loopbackBaseUrl, loopbackHeaders } from './loopback.js';
import { createDaguerreMcpServer } from './mcp-server.js';

export interface McpEndpointDependencies {
  apiKeys: ApiKeyService;
  requireHttps: boolean;
  trustProxy: boolean;
  /** Browser origins allowed besides the service's own (MCP_ALLOWED_ORIGINS). */
  allowedOrigins: readonly string[];
  budget: InlineBudget;
  logger: Logger;
}

/** The key of an MCP client: header X-API-Key or Authorization: Bearer (never in the URL). */
function presentedKey(req: Request): string | undefined {
  const header = req.get('x-api-key');
  if (header) return header;
  const match = /^Bearer\s+(.+)$/i.exec(req.get('authorization') ?? '');
  return match?.[1]?.trim();
}

/**
 * A missing, wrong or expired key answers 403, not 401: MCP hosts take any 401 as "start OAuth".
 * Measured with the MCP Inspector 2.12 CLI: on 401, with or without a WWW-Authenticate naming the
 * key scheme, it probes /.well-known/oauth-* and tries dynamic client registration (or stops with
 * "Interactive OAuth requires a TTY"); on 403 it prints this message. The SDK's client with an
 * authProvider does the same (401: OAuth discovery; 403 without `insufficient_scope`: the error as
 * sent). The header still names the scheme for a human reading it. docs/mcp.md, "Authentication".
 */
const KEY_CHALLENGE = 'ApiKey realm="daguerre", header="X-API-Key"';

function sendKeyError(res: Response, error: ApiError) {
  res.setHeader('WWW-Authenticate', KEY_CHALLENGE);
  sendJsonRpcError(
    res,
    403,
    JSON_RPC.unauthorized,
    `${error.message} (${error.code}): send a valid Daguerre API key in header X-API-Key (or Authorization: Bearer <key>). This MCP endpoint does not use OAuth.`,
    { code: error.code },
  );
}

/**
 * `/mcp`: MCP over streamable HTTP, stateless. Each POST gets a fresh server and transport (no
 * session to keep, so any instance behind a load balancer can answer). The tools call the API over
 * loopback with the caller's own key: same auth, rate limit, validation and credits as HTTP callers.
 * Mounted before the app's JSON parser: this router reads its own body, so every refusal is JSON-RPC.
 */
export function mcpEndpoint(deps: McpEndpointDependencies): Router {
  const router = express.Router();
  router.use(checkOrigin({ allowedOrigins: deps.allowedOrigins, trustProxy: deps.trustProxy }));

  const authenticate = (req: Request, res: Response, next: NextFunction) => {
    if (deps.requireHttps && !req.secure) {
      sendJsonRpcError(res, 400, JSON_RPC.serverError, 'API keys must be sent over HTTPS; use the https:// address', {
        code: 'HTTPS_REQUIRED',
      });
      return;
    }
    const key = presentedKey(req);
    deps.apiKeys
      .authenticate(key)
      .then((auth) => {
        res.locals.mcpKey = key;
        res.locals.mcpAuth = auth;
        next();
      })
      .catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 401) sendKeyError(res, error);
        else if (error instanceof ApiError) sendJsonRpcError(res, error.status, JSON_RPC.serverError, error.message, { code: error.code });
        else next(error);
      });
  };

  // Nothing is charged before the tools run: a body that is not JSON-RPC never reaches them.
  router.post(
    '/',
    ...jsonRpcBody(),
    authenticate,
    handle(async (req: Request, res: Response, next: NextFunction) => {
      const apiKey = res.locals.mcpKey as string;
      const publicBaseUrl = `${req.protocol}://${req.get('host') ?? 'localhost'}`;
      const client = createClient({
        baseUrl: loopbackBaseUrl(req),
        apiKey,
        fetch: (input, init) =>
          fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...loopbackHeaders(publicBaseUrl) } }),
      });
      const server = createDaguerreMcpServer({ client, publicBaseUrl, budget: deps.budget });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      // The answer is over: a close that fails has nobody left to tell but the log.
      const closeFailed = (error: unknown) =>
        deps.logger.warn({ err: error, requestId: res.locals.daguerre?.requestId }, 'could not close an mcp request');
      res.on('close', () => {
        transport.close().catch(closeFailed);
        server.close().catch(closeFailed);
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(req, res, req.body);
      } catch (error) {
        if (!res.headersSent) next(error);
        else deps.logger.error({ err: error, requestId: res.locals.daguerre?.requestId }, 'mcp request failed');
      }
    }),
  );

  // Stateless: no server-to-client stream to open, no session to end.
  router.all('/', (_req, res) => {
    res.setHeader('Allow', 'POST');
    sendJsonRpcError(res, 405, JSON_RPC.serverError, 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST', {
      code: 'METHOD_NOT_ALLOWED',
    });
  });
  router.use(
    jsonRpcErrors((error, req) => deps.logger.error({ err: error, requestId: req.res?.locals.daguerre?.requestId }, 'mcp request failed')),
  );
  return router;
}

import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { createClient } from '@daguerre/client';
import { ApiError } from '../errors.js';
import type { ApiKeyService } from '../services/api-keys.js';
import type { InlineBudget } from './delivery.js';
import { loopbackBaseUrl, loopbackHeaders } from './loopback.js';
import { createDaguerreMcpServer } from './mcp-server.js';

export interface McpEndpointDependencies {
  apiKeys: ApiKeyService;
  requireHttps: boolean;
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

/** An error as JSON-RPC (what an MCP client parses), with the service's error code in `data`. */
function jsonRpcError(res: Response, status: number, code: string, message: string) {
  res.status(status).json({ jsonrpc: '2.0', error: { code: status === 401 ? -32001 : -32000, message, data: { code } }, id: null });
}

/**
 * `/mcp`: MCP over streamable HTTP, stateless. Each POST gets a fresh server and transport (no
 * session to keep, so any instance behind a load balancer can answer). The tools call the API over
 * loopback with the caller's own key: same auth, rate limit, validation and credits as HTTP callers.
 */
export function mcpEndpoint(deps: McpEndpointDependencies): Router {
  // The body is parsed by the app's express.json (1 MB, as POST /capture: html up to the contract's limit fits).
  const router = express.Router();

  const authenticate = (req: Request, res: Response, next: NextFunction) => {
    if (deps.requireHttps && !req.secure) {
      jsonRpcError(res, 400, 'HTTPS_REQUIRED', 'API keys must be sent over HTTPS; use the https:// address');
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
        if (error instanceof ApiError && error.status < 500) jsonRpcError(res, error.status, error.code, error.message);
        else next(error);
      });
  };

  router.post('/', authenticate, async (req: Request, res: Response, next: NextFunction) => {
    const apiKey = res.locals.mcpKey as string;
    const client = createClient({
      baseUrl: loopbackBaseUrl(req),
      apiKey,
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...loopbackHeaders() } }),
    });
    const publicBaseUrl = `${req.protocol}://${req.get('host') ?? 'localhost'}`;
    const server = createDaguerreMcpServer({ client, publicBaseUrl, budget: deps.budget });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      deps.logger.error({ err: error, requestId: res.locals.daguerre?.requestId }, 'mcp request failed');
      if (!res.headersSent) next(error);
    }
  });

  // Stateless: no server-to-client stream to open, no session to end.
  router.all('/', (_req, res) => {
    res.setHeader('Allow', 'POST');
    jsonRpcError(res, 405, 'METHOD_NOT_ALLOWED', 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST');
  });
  return router;
}

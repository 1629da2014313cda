import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';

/**
 * The /mcp endpoint reaches the API through the SDK over loopback, so a tool call goes through the
 * same authentication, rate limit, validation and credits as any request. The token marks those
 * calls as the continuation of an /mcp request that already passed REQUIRE_HTTPS: it is random per
 * process and never leaves it.
 */
const TOKEN = randomBytes(32).toString('hex');
export const LOOPBACK_HEADER = 'x-daguerre-mcp-loopback';
/** The address the agent reached /mcp at: links the service stores (a monitor's, a job's) point there, not at loopback. */
const PUBLIC_BASE_HEADER = 'x-daguerre-mcp-public-base';

export function loopbackHeaders(publicBaseUrl?: string): Record<string, string> {
  return { [LOOPBACK_HEADER]: TOKEN, ...(publicBaseUrl ? { [PUBLIC_BASE_HEADER]: publicBaseUrl } : {}) };
}

/** The public address an /mcp call came through, when this request is its loopback continuation (never trusted otherwise). */
export function loopbackPublicBase(req: Pick<Request, 'get'>): string | undefined {
  return isMcpLoopback(req) ? req.get(PUBLIC_BASE_HEADER) : undefined;
}

export function isMcpLoopback(req: Pick<Request, 'get'>): boolean {
  const presented = req.get(LOOPBACK_HEADER);
  if (presented === undefined || presented.length !== TOKEN.length) return false;
  return timingSafeEqual(Buffer.from(presented), Buffer.from(TOKEN));
}

/** The address this request arrived on, as a base URL the process can call itself at. */
export function loopbackBaseUrl(req: Request): string {
  const socket = req.socket;
  const raw = socket.localAddress ?? '127.0.0.1';
  const address = raw.startsWith('::ffff:') ? raw.slice('::ffff:'.length) : raw;
  const host = address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${socket.localPort}`;
}

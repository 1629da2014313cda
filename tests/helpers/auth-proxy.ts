import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registerFixtureAddress } from './fixture-server.js';

export interface ProxyEntry {
  url: string;
  authorization: string | undefined;
}

/**
 * A forward proxy for plain-HTTP GETs on loopback that insists on Basic credentials (407 without
 * them) and marks what it forwards with `Via: 1.1 test-proxy`.
 */
export async function startAuthenticatingProxy(username: string, password: string) {
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const log: ProxyEntry[] = [];
  const server: Server = createServer((req, res) => {
    const authorization = req.headers['proxy-authorization'];
    log.push({ url: req.url ?? '', authorization });
    if (authorization !== expected) {
      res
        .writeHead(407, { 'proxy-authenticate': 'Basic realm="test-proxy"', 'content-type': 'text/plain' })
        .end('proxy authentication required');
      return;
    }
    const target = new URL(req.url ?? '');
    const headers: Record<string, string | string[] | undefined> = { ...req.headers, via: '1.1 test-proxy' };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const outgoing = httpRequest(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers },
      (incoming) => {
        res.writeHead(incoming.statusCode ?? 502, incoming.headers);
        incoming.pipe(res);
      },
    );
    outgoing.on('error', () => res.writeHead(502).end());
    req.pipe(outgoing);
  });
  server.on('connect', (_req, socket) => socket.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // The test proxy is a destination the network policy must allow (a user's proxy is checked too).
  registerFixtureAddress(`127.0.0.1:${(server.address() as AddressInfo).port}`);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    expected,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

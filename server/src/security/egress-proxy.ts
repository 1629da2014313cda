import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { AddressPolicy } from './address-policy.js';
import { bareHost, checkedAddress, DestinationRefusedError } from './destination-check.js';
import type { Resolver } from './resolver.js';
import { RecentDestinations } from './recent-destinations.js';
import { SOCKS_REPLY, SocksRefusal, startSocks5Server } from './socks5-server.js';

/** Header on every response the proxy refuses itself, so the renderer can tell a refusal from a site's 403. */
export const REFUSED_HEADER = 'x-daguerre-egress';

export interface UpstreamProxy {
  host: string;
  port: number;
  username?: string;
  password?: string;
}

interface Chain {
  upstream: UpstreamProxy;
}

const CONNECT_TIMEOUT_MS = 10_000;
const HOP_BY_HOP = ['proxy-authorization', 'proxy-connection', 'connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

function basic(username = '', password = ''): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

function splitHostPort(authority: string, defaultPort: number): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(authority);
  if (!match) throw new DestinationRefusedError(authority, 'is not host:port');
  return { host: bareHost(match[1]!), port: match[2] ? Number(match[2]) : defaultPort };
}

/**
 * The boundary of the network policy: Chromium opens every connection through this proxy on
 * loopback (`--proxy-server=socks5://…`, with `<-loopback>` so loopback is not bypassed). Each
 * destination is resolved once, every address is checked, and the connection goes to the address
 * that was checked, so a name that answers differently on a second look (DNS rebinding) gains
 * nothing. A refused connection fails in Chromium as a SOCKS error; `refusedRecently` tells the
 * renderer that it was the policy, not a dead site.
 *
 * A capture with its own proxy gets an HTTP proxy listener of its own (openChain); its traffic is
 * forwarded to that upstream proxy, whose own address is checked the same way.
 */
export class EgressProxy {
  private server: NetServer | undefined;
  private readonly chainServers = new Set<Server>();
  private readonly sockets = new Set<Duplex>();
  port = 0;
  refused = 0;

  constructor(
    private readonly policy: AddressPolicy,
    private readonly resolve: Resolver,
    private readonly logger: Logger,
  ) {}

  /** Keeps a socket until it closes, so that stop() can end it. */
  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }

  /** An HTTP proxy listener for one capture's chain to the caller's proxy. */
  private async listen(chain: Chain): Promise<Server> {
    const server = createServer((req, res) => void this.forward(req, res, chain));
    server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.tunnel(req, socket, head, chain));
    server.on('connection', (socket: Socket) => this.track(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  async start(): Promise<number> {
    const server = await startSocks5Server(
      (host, port) => this.connectChecked(host, port),
      (destination, error) => this.refuse(destination, error),
    );
    this.server = server;
    server.on('connection', (socket: Socket) => this.track(socket));
    this.port = (server.address() as AddressInfo).port;
    return this.port;
  }

  /** The proxy for Chromium's --proxy-server. */
  get url(): string {
    return `socks5://127.0.0.1:${this.port}`;
  }

  /** A SOCKS connection to the checked address of host:port, or the refusal the client is told. */
  private async connectChecked(host: string, port: number): Promise<Socket> {
    let address: string;
    try {
      address = await checkedAddress(this.policy, this.resolve, host, port);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // With every address allowed, a name that does not resolve reveals nothing internal: it is
      // the destination's error, named as Chromium names it. Otherwise it answers exactly as a
      // refused one, so that no page or caller can tell an internal name from a missing one.
      if (this.policy.allowPrivateNetwork && error instanceof DestinationRefusedError && error.unresolved) {
        this.recent.noteFailure(host, port, Object.assign(new Error(message), { code: 'ENOTFOUND' }));
        throw new SocksRefusal(SOCKS_REPLY.hostUnreachable, message);
      }
      throw new SocksRefusal(SOCKS_REPLY.notAllowed, message);
    }
    let upstream: Socket;
    try {
      upstream = await this.open(address, port);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code === 'ECONNREFUSED' ? SOCKS_REPLY.connectionRefused : SOCKS_REPLY.hostUnreachable;
      this.recent.noteFailure(host, port, error);
      throw new SocksRefusal(code, error instanceof Error ? error.message : String(error));
    }
    this.track(upstream);
    return upstream;
  }

  /**
   * A listener of its own for one capture that uses the caller's proxy: the browser context of that
   * capture points at it, and everything it receives is forwarded to `upstream`.
   */
  async openChain(upstream: UpstreamProxy): Promise<{ url: string; close: () => Promise<void> }> {
    const server = await this.listen({ upstream });
    this.chainServers.add(server);
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: async () => {
        this.chainServers.delete(server);
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  /** What happened to destinations in the last seconds (recent-destinations.ts). */
  private readonly recent = new RecentDestinations();

  /** Chromium's name for why a connection to the host:port of `url` failed in the last 30 seconds, if one did. */
  failureOf(url: string): string | undefined {
    return this.recent.failureOf(url);
  }

  /** Whether the host:port of `url` was refused by the policy in the last 30 seconds. */
  refusedRecently(url: string): boolean {
    return this.recent.refusedRecently(url);
  }

  private refuse(where: string, error: unknown): void {
    this.refused += 1;
    const authority = where.includes('/') ? undefined : where;
    if (authority) {
      const { host, port } = (() => {
        try {
          return splitHostPort(authority, 80);
        } catch {
          return { host: authority, port: 80 };
        }
      })();
      this.recent.noteRefusal(host, port);
    }
    this.logger.info({ destination: where, reason: error instanceof Error ? error.message : String(error) }, 'egress refused');
  }

  /** Plain-HTTP requests in absolute form, forwarded to the caller's proxy. */
  private async forward(req: IncomingMessage, res: ServerResponse, chain: Chain): Promise<void> {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new Error('only http is proxied in absolute form');
    } catch {
      res.writeHead(400, { [REFUSED_HEADER]: 'refused' }).end();
      return;
    }
    const port = Number(target.port || 80);
    const headers = { ...req.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    try {
      const upstream = chain.upstream;
      const address = await checkedAddress(this.policy, this.resolve, upstream.host, upstream.port);
      await this.refuseKnownPrivate(target.hostname, port);
      const options = {
        host: address,
        port: upstream.port,
        method: req.method,
        path: target.href,
        headers: {
          ...headers,
          host: target.host,
          ...(upstream.username !== undefined ? { 'proxy-authorization': basic(upstream.username, upstream.password) } : {}),
        },
      };
      const outgoing = httpRequest({ ...options, timeout: CONNECT_TIMEOUT_MS }, (incoming) => {
        res.writeHead(incoming.statusCode ?? 502, incoming.headers);
        incoming.pipe(res);
      });
      outgoing.on('timeout', () => outgoing.destroy(new Error('upstream timeout')));
      outgoing.on('error', () => {
        if (!res.headersSent) res.writeHead(502, { [REFUSED_HEADER]: 'unreachable' }).end();
        else res.destroy();
      });
      req.pipe(outgoing);
    } catch (error) {
      this.refuse(target.host, error);
      res.writeHead(403, { [REFUSED_HEADER]: 'refused', 'content-type': 'text/plain' }).end('destination not allowed');
    }
  }

  /** Through a user's proxy we cannot see what it connects to; literal and resolvable private targets are still refused. */
  private async refuseKnownPrivate(host: string, port: number): Promise<void> {
    try {
      await checkedAddress(this.policy, this.resolve, host, port);
    } catch (error) {
      if (error instanceof DestinationRefusedError && /non-public/.test(error.reason)) throw error;
    }
  }

  /** CONNECT tunnels (HTTPS, WSS and WebSockets), through the caller's proxy. */
  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer, chain: Chain): Promise<void> {
    this.track(client);
    client.on('error', () => client.destroy());
    let upstream: Socket;
    try {
      const { host, port } = splitHostPort(req.url ?? '', 443);
      const proxy = chain.upstream;
      const address = await checkedAddress(this.policy, this.resolve, proxy.host, proxy.port);
      await this.refuseKnownPrivate(host, port);
      upstream = await this.open(address, proxy.port);
      await this.upstreamConnect(upstream, req.url ?? '', proxy);
    } catch (error) {
      this.refuse(req.url ?? '', error);
      client.end(`HTTP/1.1 403 Forbidden\r\n${REFUSED_HEADER}: refused\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    this.track(upstream);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  }

  private open(address: string, port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: address, port, timeout: CONNECT_TIMEOUT_MS });
      socket.once('connect', () => {
        socket.setTimeout(0);
        resolve(socket);
      });
      socket.once('timeout', () => socket.destroy(new Error('connect timeout')));
      socket.once('error', reject);
    });
  }

  /** Asks the user's proxy for a tunnel and waits for its 200. */
  private upstreamConnect(socket: Socket, authority: string, proxy: UpstreamProxy): Promise<void> {
    return new Promise((resolve, reject) => {
      const auth = proxy.username !== undefined ? `Proxy-Authorization: ${basic(proxy.username, proxy.password)}\r\n` : '';
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
      let buffered = '';
      const onData = (chunk: Buffer) => {
        buffered += chunk.toString('latin1');
        const end = buffered.indexOf('\r\n\r\n');
        if (end === -1) return;
        socket.off('data', onData);
        if (/^HTTP\/1\.[01] 200/.test(buffered)) resolve();
        else reject(new Error(`upstream proxy answered ${buffered.split('\r\n')[0]}`));
      };
      socket.on('data', onData);
      socket.once('error', reject);
    });
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    for (const server of [...this.chainServers, ...(this.server ? [this.server] : [])]) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/**
 * host:port of every fixture server started in this process, and listeners for new ones: test
 * services allow exactly these through the network policy, and nothing else on loopback.
 */
export const startedFixtureAddresses: string[] = [];
const fixtureListeners = new Set<(address: string) => void>();
export function onFixtureServerStarted(listener: (address: string) => void): () => void {
  fixtureListeners.add(listener);
  return () => fixtureListeners.delete(listener);
}
/** Registers another loopback test server (s3rver, a test proxy) as a fixture. */
export function registerFixtureAddress(address: string): void {
  startedFixtureAddresses.push(address);
  for (const listener of fixtureListeners) listener(address);
}

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void;

const PAGES = new URL('../fixtures/pages/', import.meta.url).pathname;
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css',
  '.js': 'application/javascript',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.gif': 'image/gif',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.webm': 'video/webm',
  '.wav': 'audio/wav',
  '.txt': 'text/plain; charset=utf-8',
};

/** A transparent 1×1 GIF: the answer to beacons, so that `<img src="/report?…">` loads. */
const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/**
 * Serves tests/fixtures/pages on 127.0.0.1 and records every request it receives, so tests can
 * assert on what the browser actually asked for (headers, user agent, blocked resources).
 */
export class FixtureServer {
  readonly requests: RecordedRequest[] = [];
  private readonly routes = new Map<string, RouteHandler>();
  private server: Server | undefined;
  url = '';

  route(path: string, handler: RouteHandler): this {
    this.routes.set(path, handler);
    return this;
  }

  /** Serves literal HTML at a path. */
  page(path: string, html: string, headers: Record<string, string> = {}): this {
    return this.route(path, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers });
      res.end(html);
    });
  }

  /** `host`: another loopback address is another site to the browser (127.0.0.2 for a third-party iframe). */
  async start(host = '127.0.0.1'): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, host, resolve));
    this.url = `http://${host}:${(this.server.address() as AddressInfo).port}`;
    registerFixtureAddress(new URL(this.url).host);
    return this;
  }

  requestsTo(path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path || r.path.startsWith(`${path}?`));
  }

  /**
   * What pages reported through `/report?key=value…` (an image beacon or fetch the server answers
   * with a 1×1 GIF), oldest first, optionally only those with `tag=<tag>`.
   */
  reports(tag?: string): Array<Record<string, string>> {
    return this.requestsTo('/report')
      .map((r) => Object.fromEntries(new URL(r.path, 'http://fixture').searchParams))
      .filter((report) => tag === undefined || report.tag === tag);
  }

  /** Resolves once a request to `path` arrives (or was already recorded); rejects after `timeoutMs`. */
  async waitForRequest(path: string, timeoutMs = 5_000): Promise<RecordedRequest> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = this.requestsTo(path)[0];
      if (found) return found;
      if (Date.now() > until) throw new Error(`no request to ${path} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  reset(): void {
    this.requests.length = 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const path = req.url ?? '/';
    this.requests.push({ method: req.method ?? 'GET', path, headers: req.headers });
    const route = this.routes.get(path.split('?')[0]!);
    if (route) return route(req, res);
    if (path.split('?')[0] === '/report') {
      res.writeHead(200, { 'content-type': 'image/gif', 'cache-control': 'no-store', 'access-control-allow-origin': '*' });
      res.end(PIXEL_GIF);
      return;
    }
    const file = normalize(join(PAGES, decodeURIComponent(path.split('?')[0]!)));
    if (!file.startsWith(PAGES)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

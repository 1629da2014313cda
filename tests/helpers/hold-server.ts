import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { until } from './until.js';

/**
 * Pages the test holds open until it says so; it learns from which address each was asked for. A
 * held page is slow from its first byte, so the instant a test acts on (a process killed while it
 * renders) is an event, never a timer. The page of a released tag is `page(tag)`.
 */
export class HoldServer {
  constructor(private readonly page: (tag: string) => string) {}

  private server: Server | undefined;
  private readonly released = new Set<string>();
  private readonly waiting = new Map<string, ServerResponse[]>();
  readonly requests: { tag: string; from: string }[] = [];
  url = '';

  async start(address: string): Promise<void> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const tag = (req.url ?? '').replace(/^\/hold\//, '');
      this.requests.push({ tag, from: (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '') });
      if (this.released.has(tag)) return this.answer(res, tag);
      this.waiting.set(tag, [...(this.waiting.get(tag) ?? []), res]);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, address, resolve));
    this.url = `http://${address}:${(this.server!.address() as AddressInfo).port}`;
  }

  private answer(res: ServerResponse, tag: string) {
    res.writeHead(200, { 'content-type': 'text/html' }).end(this.page(tag));
  }

  /** The first address that asked for `tag`. */
  asked(tag: string, timeoutMs = 90_000): Promise<string> {
    return until(() => this.requests.find((r) => r.tag === tag)?.from, timeoutMs, `a request for /hold/${tag}`);
  }

  release(tag: string): void {
    this.released.add(tag);
    for (const res of this.waiting.get(tag) ?? []) if (!res.destroyed) this.answer(res, tag);
    this.waiting.delete(tag);
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

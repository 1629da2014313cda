/**
 * Static server for the benchmark fixtures (and, behind them, the tests' fixture pages) on
 * 127.0.0.1, port chosen by the system. It counts the requests of every path, so the benchmark can
 * check what a capture actually loaded. Every response says `Cache-Control: no-store`, so each
 * capture (service or baseline, fresh or reused browser context) fetches every resource again and
 * all of them do the same work.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { FIXTURE_DIR, LAZY_COUNT, lazyImagePng, REPO_ROOT } from './make-fixtures.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Where a path is looked up, in order: the bench's own fixtures, then the tests' pages (the real
 * saved pages of the bench's page set live there, with the /img/swatch.png they reference).
 */
const ROOTS = [FIXTURE_DIR, join(REPO_ROOT, 'tests', 'fixtures', 'pages')];

export interface FixtureServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  /** Requests per path since the last reset. */
  counts: Map<string, number>;
  /** Bytes sent per path since the last reset. */
  bytes: Map<string, number>;
  resetCounts(): void;
  close(): Promise<void>;
}

export async function startFixtureServer(): Promise<FixtureServer> {
  const counts = new Map<string, number>();
  const bytes = new Map<string, number>();
  const files = new Map<string, Buffer>();

  async function body(path: string): Promise<Buffer | undefined> {
    const lazy = /^\/img\/lazy-(\d+)\.png$/.exec(path);
    if (lazy) {
      const n = Number(lazy[1]);
      return n >= 1 && n <= LAZY_COUNT ? lazyImagePng(n) : undefined;
    }
    const cached = files.get(path);
    if (cached) return cached;
    for (const root of ROOTS) {
      const target = normalize(join(root, path));
      if (!target.startsWith(root + sep)) return undefined;
      try {
        const data = await readFile(target);
        files.set(path, data);
        return data;
      } catch {
        // not in this root: the next one
      }
    }
    return undefined;
  }

  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
    counts.set(path, (counts.get(path) ?? 0) + 1);
    body(path).then(
      (data) => {
        if (!data || (req.method !== 'GET' && req.method !== 'HEAD')) {
          res.writeHead(404, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store' }).end('not found');
          return;
        }
        bytes.set(path, (bytes.get(path) ?? 0) + data.length);
        res.writeHead(200, {
          'Content-Type': TYPES[extname(path)] ?? 'application/octet-stream',
          'Content-Length': data.length,
          'Cache-Control': 'no-store',
        });
        res.end(req.method === 'HEAD' ? undefined : data);
      },
      () => {
        res.writeHead(500).end();
      },
    );
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    counts,
    bytes,
    resetCounts() {
      counts.clear();
      bytes.clear();
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** How many of the lazy images /img/lazy-1.png … /img/lazy-40.png have been requested at least `times` times. */
export function lazyImagesRequested(counts: Map<string, number>, times = 1): number {
  let n = 0;
  for (let i = 1; i <= LAZY_COUNT; i++) if ((counts.get(`/img/lazy-${i}.png`) ?? 0) >= times) n++;
  return n;
}

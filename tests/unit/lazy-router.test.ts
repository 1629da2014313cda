import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { lazyRouter } from '../../server/src/http/lazy-router.js';

describe('lazyRouter', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function serve(handler: RequestHandler): Promise<string> {
    const app = express();
    app.use('/lazy', handler);
    app.use(((error, _req, res, _next) => res.status(500).json({ error: (error as Error).message })) as express.ErrorRequestHandler);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    close = () => new Promise((resolve) => server.close(() => resolve()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/lazy`;
  }

  it('loads its router at the first request only, then serves every request through it', async () => {
    let loads = 0;
    const url = await serve(
      lazyRouter(async () => {
        loads += 1;
        const router = express.Router();
        router.get('/hello', (_req, res) => res.json({ hello: 'world' }));
        return router;
      }),
    );
    expect(loads).toBe(0);
    const answers = await Promise.all([1, 2, 3].map(() => fetch(`${url}/hello`).then((r) => r.json())));
    expect(answers).toEqual([{ hello: 'world' }, { hello: 'world' }, { hello: 'world' }]);
    expect(loads).toBe(1);
  });

  it('answers a failed load through the error handler, and tries again on the next request', async () => {
    let loads = 0;
    const url = await serve(
      lazyRouter(async () => {
        loads += 1;
        if (loads === 1) throw new Error('module not found');
        return (_req, res) => void res.json({ loaded: loads });
      }),
    );
    const first = await fetch(url);
    expect(first.status).toBe(500);
    expect(await first.json()).toEqual({ error: 'module not found' });
    expect(await fetch(url).then((r) => r.json())).toEqual({ loaded: 2 });
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { contract, routesOf, type RoutePolicy } from '@daguerre/contract';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeMatcher } from '../../server/src/http/route-match.js';

const AUTH_MODES: ReadonlyArray<RoutePolicy['auth']> = ['key', 'key-or-signed-link', 'none'];
const REFUSAL_KINDS: ReadonlyArray<RoutePolicy['logRefusalsAs']> = [undefined, 'sync', 'async', 'batch'];

describe('every contract route declares its access policy', () => {
  const routes = routesOf(contract);

  it('lists every route of the router', () => {
    expect(routes.map(({ name }) => name).sort()).toEqual(Object.keys(contract).sort());
  });

  it.each(routes.map(({ name, route }) => [name, route.metadata] as const))('%s has a RoutePolicy', (_name, policy) => {
    expect(policy).toBeTypeOf('object');
    expect(Object.keys(policy).every((field) => ['auth', 'rateLimited', 'logRefusalsAs'].includes(field))).toBe(true);
    expect(AUTH_MODES).toContain(policy.auth);
    expect(policy.rateLimited).toBeTypeOf('boolean');
    expect(REFUSAL_KINDS).toContain(policy.logRefusalsAs);
    // An open route has no organization to count a rate limit against or to log a refusal for.
    if (policy.auth === 'none') expect(policy).toEqual({ auth: 'none', rateLimited: false });
  });

  it('declares what the service enforced path by path before: signed links on GET /capture only, the rate limit on what starts captures', () => {
    const table = Object.fromEntries(routes.map(({ route }) => [`${route.method} ${route.path}`, route.metadata]));
    expect(
      Object.entries(table)
        .filter(([, policy]) => policy.auth !== 'key')
        .map(([route]) => route),
    ).toEqual(['GET /capture']);
    expect(
      Object.entries(table)
        .filter(([, policy]) => policy.rateLimited)
        .map(([route]) => route),
    ).toEqual(['GET /capture', 'POST /capture', 'POST /captures', 'POST /captures/bulk', 'POST /monitors', 'POST /diff']);
    expect(
      Object.fromEntries(Object.entries(table).flatMap(([route, policy]) => (policy.logRefusalsAs ? [[route, policy.logRefusalsAs]] : []))),
    ).toEqual({
      'GET /capture': 'sync',
      'POST /capture': 'sync',
      'POST /captures': 'async',
      'POST /captures/bulk': 'batch',
      'POST /diff': 'sync',
    });
  });
});

describe('routeMatcher finds the route Express routes a request to', () => {
  const match = routeMatcher(contract);
  const routes = routesOf(contract);
  const prefixes = [...new Set(routes.map(({ route }) => `/${route.path.split('/')[1]}`))];
  let server: Server;
  let baseUrl: string;

  beforeAll(async () => {
    // The contract's routes mounted as ts-rest mounts them, then each path prefix as app.use mounted it.
    const app = express();
    for (const { name, route } of routes) {
      const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
      app[method](route.path, (_req, res) => void res.set('x-match', `route:${name}`).end());
    }
    for (const prefix of prefixes) app.use(prefix, (_req, res) => void res.set('x-match', `under:${prefix}`).end());
    app.use((_req, res) => void res.set('x-match', 'none').end());
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const PATHS = [
    '/capture',
    '/CAPTURE',
    '/capture/',
    '/capture/x',
    '/capturex',
    '/captures',
    '/Captures/',
    '/captures/abc',
    '/captures/abc/',
    '/captures/a.b',
    '/captures/abc/file',
    '/captures/abc/FILE/',
    '/captures/bulk',
    '/captures/bulk/b1',
    '/captures/a/b/c',
    '/captures//file',
    '/usage',
    '/usage/x',
    '/webhooks',
    '/webhooks/events',
    '/webhooks/events/e1/redeliver',
    '/webhooks/events/e1',
    '/monitors',
    '/monitors/m1',
    '/monitors/m%20x',
    '/monitors/m1/runs',
    '/monitors/m1/runs/r1/golden',
    '/monitors/m1/runs/r1/image',
    '/monitors/m1/runs/r1/diff',
    '/monitors/m1/runs/r1',
    '/diff',
    '/diff/x',
    '/diffs',
    '/diffs/d',
    '/diffs/d/before',
    '/diffs/d/before/x',
    '/nowhere',
    '/docs',
    '/',
  ];
  const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

  it('agrees with Express on every method and path tried', async () => {
    const disagreements: string[] = [];
    for (const method of METHODS) {
      for (const path of PATHS) {
        const response = await fetch(`${baseUrl}${path}`, { method });
        const expected = response.headers.get('x-match');
        const found = match(method, path);
        const actual = !found ? 'none' : found.kind === 'route' ? `route:${found.name}` : `under:${found.prefix}`;
        if (actual !== expected) disagreements.push(`${method} ${path}: Express ${expected}, matcher ${actual}`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('authenticates an unknown path under /capture as /capture is (a signed link too), and elsewhere with a key', () => {
    expect(match('GET', '/capture/x')).toEqual({ kind: 'under', prefix: '/capture', auth: 'key-or-signed-link' });
    expect(match('PUT', '/usage')).toEqual({ kind: 'under', prefix: '/usage', auth: 'key' });
    expect(match('GET', '/diff')).toEqual({ kind: 'under', prefix: '/diff', auth: 'key' });
  });
});

import { contract, routesOf } from '@daguerre/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * Each contract route's declared policy (contract/src/route-policy.ts), as the service applies it
 * (server/src/http/route-policy.ts): every route asks for a key, the rate limit counts only the
 * routes that start captures, and a path under the contract's that matches no route is still
 * authenticated before its 404.
 */
describe('route policies from the contract', () => {
  let service: TestService;
  const routes = routesOf(contract);
  const pathOf = (path: string) => path.replace(/:[A-Za-z]+/g, 'x');

  beforeAll(async () => {
    service = await startTestService();
  });

  afterAll(async () => {
    await service?.stop();
  });

  const call = (method: string, path: string, withKey: boolean) =>
    service.get(path, {
      method,
      headers: { 'content-type': 'application/json', ...(withKey ? { 'x-api-key': service.apiKey } : {}) },
      ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }),
    });

  it('refuses every contract route without a key, 401 UNAUTHORIZED, before anything is counted', async () => {
    for (const { route } of routes) {
      const response = await call(route.method, pathOf(route.path), false);
      expect(response.status, `${route.method} ${route.path}`).toBe(401);
      expect(response.headers.get('x-ratelimit-limit'), `${route.method} ${route.path}`).toBeNull();
    }
  });

  it('counts the rate limit on the routes that declare it, and on no other', async () => {
    for (const { route } of routes) {
      const response = await call(route.method, pathOf(route.path), true);
      const counted = response.headers.get('x-ratelimit-limit') !== null;
      expect(counted, `${route.method} ${route.path} answered ${response.status}`).toBe(route.metadata.rateLimited);
    }
  });

  it('refuses a repeated query parameter before authentication', async () => {
    const response = await service.get('/usage?apiKey=a&apiKey=b');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('VALIDATION_ERROR');
  });

  it('authenticates an unknown method or path under the contract before its 404; elsewhere a plain 404', async () => {
    for (const [method, path] of [
      ['PUT', '/usage'],
      ['GET', '/captures/a/b/c'],
      ['GET', '/capture/x'],
      ['GET', '/diff'],
      ['PUT', '/monitors'],
    ] as const) {
      expect((await call(method, path, false)).status, `${method} ${path} without a key`).toBe(401);
      const known = await call(method, path, true);
      expect(known.status, `${method} ${path} with a key`).toBe(404);
      expect(((await known.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    }
    expect((await call('GET', '/nowhere', false)).status).toBe(404);
  });

  it('still answers HEAD /capture with 405 before authentication', async () => {
    const response = await service.get('/capture', { method: 'HEAD' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST');
  });
});

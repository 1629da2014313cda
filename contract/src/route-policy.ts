import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import type { CaptureKind } from './request-log.js';

/**
 * Who may call a route and what a call counts against: declared on every route of the contract as
 * its ts-rest `metadata`, read by the server's one policy middleware (server/src/http/route-policy.ts)
 * and by the OpenAPI security of each operation. See docs/architecture.md, "The path of one capture".
 */
export type RoutePolicy =
  | {
      /**
       * `key`: an API key (query `apiKey`, body `apiKey` or header `X-API-Key`). `key-or-signed-link`:
       * a GET may instead carry a signed link, keyId … signature last (docs/signed-links.md).
       */
      auth: 'key' | 'key-or-signed-link';
      /** Each call takes one request of the organization's capture rate limit (X-RateLimit-* headers). */
      rateLimited: boolean;
      /**
       * The route starts captures: a call refused before it reserved anything is written to the
       * request log as a capture of this kind (docs/request-log.md). Absent: refusals are not logged.
       */
      logRefusalsAs?: Extract<CaptureKind, 'sync' | 'async' | 'batch'>;
    }
  /** Open to anyone: nothing to count a rate limit against, nothing to log for an organization. */
  | { auth: 'none'; rateLimited: false; logRefusalsAs?: never };

/** A contract route with its policy, as every route of `contract` is. */
export type PolicedRoute = AppRoute & { metadata: RoutePolicy };

/** The names (dotted for nested routers) of the routes of a router that declare no RoutePolicy. */
type RoutesWithoutPolicy<T, Prefix extends string = ''> = {
  [K in keyof T & string]: T[K] extends AppRoute
    ? T[K] extends { metadata: RoutePolicy }
      ? never
      : `${Prefix}${K}`
    : RoutesWithoutPolicy<T[K], `${Prefix}${K}.`>;
}[keyof T & string];

type EveryRoutePoliced<T> = [RoutesWithoutPolicy<T>] extends [never]
  ? unknown
  : { 'every route declares metadata: RoutePolicy (contract/src/route-policy.ts); missing on': RoutesWithoutPolicy<T> };

/**
 * The router itself, unchanged; it does not compile when a route has no `metadata` that is a
 * RoutePolicy (the error's type carries the route's name). A route without a policy would
 * otherwise be served with no authentication at all.
 */
export function withRoutePolicies<T extends AppRouter>(router: T & EveryRoutePoliced<T>): T {
  return router;
}

/** Every route of a router, nested routers flattened, in declaration order (the order Express tries them). */
export function routesOf(router: AppRouter, prefix = ''): Array<{ name: string; route: PolicedRoute }> {
  return Object.entries(router).flatMap(([name, entry]) =>
    isAppRoute(entry) ? [{ name: `${prefix}${name}`, route: entry as PolicedRoute }] : routesOf(entry, `${prefix}${name}.`),
  );
}

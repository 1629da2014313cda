import { routesOf, type PolicedRoute, type RoutePolicy } from '@daguerre/contract';
import type { AppRouter } from '@ts-rest/core';

/** What a request is under the contract: one of its routes, or an unknown method or path under one of its paths. */
export type RouteMatch =
  { kind: 'route'; name: string; route: PolicedRoute } | { kind: 'under'; prefix: string; auth: RoutePolicy['auth'] };

interface CompiledRoute {
  name: string;
  route: PolicedRoute;
  pattern: RegExp;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The route's path as Express 4 matches it when ts-rest mounts the route (path-to-regexp 0.1, the
 * app's defaults): case-insensitive, one optional trailing slash, a `:param` one non-empty segment.
 * tests/unit/route-policy.test.ts checks it against Express's own routing.
 */
function pathPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '([^/]+?)' : escapeRegExp(segment)))
    .join('/');
  return new RegExp(`^${source}/?$`, 'i');
}

/** `/captures/:jobId` → `/captures`: the mount point under which today's paths and tomorrow's live. */
function firstSegmentOf(path: string): string | undefined {
  const segment = path.split('/')[1];
  return segment && !segment.startsWith(':') ? `/${segment}` : undefined;
}

/** The strictest authentication that still lets every route under a prefix be called as declared. */
function prefixAuth(auths: ReadonlyArray<RoutePolicy['auth']>): RoutePolicy['auth'] {
  if (auths.includes('key-or-signed-link')) return 'key-or-signed-link';
  return auths.includes('key') ? 'key' : 'none';
}

/**
 * Finds the contract route a request is for, by method and path, the way Express will route it to
 * ts-rest's handler: the first route in the router's order, and a HEAD goes to the GET route. A
 * request that matches no route but lies under one of the contract's paths (`PUT /usage`,
 * `/captures/a/b`) is told apart from one outside them, so that it is still authenticated before
 * its 404, as it was when the paths were mounted one by one.
 */
export function routeMatcher(router: AppRouter): (method: string, path: string) => RouteMatch | undefined {
  const routes: CompiledRoute[] = routesOf(router).map(({ name, route }) => ({ name, route, pattern: pathPattern(route.path) }));
  const authsByPrefix = new Map<string, Array<RoutePolicy['auth']>>();
  for (const { route } of routes) {
    const prefix = firstSegmentOf(route.path);
    if (prefix) authsByPrefix.set(prefix.toLowerCase(), [...(authsByPrefix.get(prefix.toLowerCase()) ?? []), route.metadata.auth]);
  }
  const prefixes = [...authsByPrefix].map(([prefix, auths]) => ({
    prefix,
    auth: prefixAuth(auths),
    // As app.use(prefix) matches: the prefix itself, or followed by a slash.
    pattern: new RegExp(`^${escapeRegExp(prefix)}(?:/|$)`, 'i'),
  }));

  return (method, path) => {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const route = routes.find((candidate) => candidate.route.method === wanted && candidate.pattern.test(path));
    if (route) return { kind: 'route', name: route.name, route: route.route };
    const under = prefixes.find((candidate) => candidate.pattern.test(path));
    return under ? { kind: 'under', prefix: under.prefix, auth: under.auth } : undefined;
  };
}

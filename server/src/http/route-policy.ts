import { contract, type CaptureKind, type RoutePolicy } from '@daguerre/contract';
import express, { type Request, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { ApiKeyService } from '../services/api-keys.js';
import type { RequestLog } from '../services/request-log.js';
import { authenticate } from './auth.js';
import { rateLimit, type CaptureRateLimiter } from './rate-limit.js';
import { rejectRepeatedParameters } from './repeated-parameters.js';
import { captureKindOf, recordRefusals } from './request-log-routes.js';
import { routeMatcher } from './route-match.js';

export interface RoutePolicyDependencies {
  apiKeys: ApiKeyService;
  requireHttps: boolean;
  rateLimiter: CaptureRateLimiter;
  /** Where refusals of the routes that declare `logRefusalsAs` are written. */
  requestLog: RequestLog;
  logger: Logger;
}

/** Several middlewares run as one, in order; Express's own router does the chaining and catches what they throw. */
function inOrder(handlers: RequestHandler[]): RequestHandler {
  const chain = express.Router();
  chain.use(...handlers);
  return chain;
}

/**
 * The access policy of every contract route, applied from the route's own declaration (its
 * RoutePolicy, contract/src/route-policy.ts) rather than from a list of paths, so a route added to
 * the contract is never served without one. Mounted before ts-rest's routes; in the order of the
 * capture's pipeline (docs/architecture.md, "The path of one capture"):
 *
 * 1. the request-log hook, on routes that start captures, before anything that may refuse;
 * 2. a repeated query parameter refused, before authentication says "API key required";
 * 3. authentication: a key, or on GET /capture a signed link too;
 * 4. the capture rate limit, on routes that start captures.
 *
 * A request under one of the contract's paths that matches none of its routes (`PUT /usage`,
 * `/captures/a/b`) is still refused a repeated parameter and authenticated before its 404.
 * Requests outside the contract's paths (docs, health, dashboard) pass untouched.
 */
export function routePolicy(deps: RoutePolicyDependencies): RequestHandler {
  const match = routeMatcher(contract);
  const authenticators: Record<RoutePolicy['auth'], RequestHandler[]> = {
    key: [authenticate(deps.apiKeys, { requireHttps: deps.requireHttps })],
    'key-or-signed-link': [authenticate(deps.apiKeys, { requireHttps: deps.requireHttps, signedLinks: true })],
    none: [],
  };
  const throttle = rateLimit(deps.rateLimiter, deps.logger);
  const repeated = rejectRepeatedParameters();
  // A batch is logged as a batch whichever face sent it; a single capture names the MCP face when it came through it.
  const refusalKind = (kind: NonNullable<RoutePolicy['logRefusalsAs']>): ((req: Request) => CaptureKind) =>
    kind === 'batch' ? () => 'batch' : (req) => captureKindOf(req, kind);

  const chains = new Map<string, RequestHandler>();
  const chainOf = (key: string, build: () => RequestHandler[]): RequestHandler => {
    let chain = chains.get(key);
    if (!chain) {
      chain = inOrder(build());
      chains.set(key, chain);
    }
    return chain;
  };
  const routeChain = (name: string, policy: RoutePolicy) =>
    chainOf(`route:${name}`, () => [
      ...(policy.logRefusalsAs ? [recordRefusals(deps.requestLog, refusalKind(policy.logRefusalsAs))] : []),
      repeated,
      ...authenticators[policy.auth],
      ...(policy.rateLimited ? [throttle] : []),
    ]);
  const underChain = (prefix: string, auth: RoutePolicy['auth']) => chainOf(`under:${prefix}`, () => [repeated, ...authenticators[auth]]);

  return (req, res, next) => {
    const found = match(req.method, req.path);
    if (!found) {
      next();
      return;
    }
    const chain = found.kind === 'route' ? routeChain(found.name, found.route.metadata) : underChain(found.prefix, found.auth);
    chain(req, res, next);
  };
}

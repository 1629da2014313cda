import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ApiKeyService, AuthenticatedKey } from '../services/api-keys.js';
import { ApiError, errors } from '../errors.js';
import { contextOf } from './request-context.js';
import { verifySignedLink } from './signed-link-auth.js';
import { isMcpLoopback } from '../mcp/loopback.js';

type KeySource = 'query' | 'body' | 'header';

function presentedKey(req: Request): { key: string | undefined; source?: KeySource } {
  const fromQuery = typeof req.query.apiKey === 'string' ? req.query.apiKey : undefined;
  if (fromQuery !== undefined) return { key: fromQuery, source: 'query' };
  const fromBody =
    req.body && typeof req.body === 'object' && typeof req.body.apiKey === 'string' ? (req.body.apiKey as string) : undefined;
  if (fromBody !== undefined) return { key: fromBody, source: 'body' };
  const fromHeader = req.get('x-api-key');
  return fromHeader !== undefined ? { key: fromHeader, source: 'header' } : { key: undefined };
}

/** A GET that carries a signed link's parameters (the link's own key stays out of the URL). */
function isSignedLink(req: Request): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && (req.query.signature !== undefined || req.query.keyId !== undefined);
}

async function authenticateRequest(keys: ApiKeyService, req: Request, signedLinks: boolean): Promise<AuthenticatedKey> {
  if (signedLinks && isSignedLink(req)) {
    if (req.query.apiKey !== undefined || req.get('x-api-key') !== undefined) {
      throw new ApiError(
        'INVALID_INPUT',
        'Give either a signed link (keyId, expires, signature) or an API key (apiKey or X-API-Key), not both',
      );
    }
    return verifySignedLink(keys, req.originalUrl);
  }
  const presented = presentedKey(req);
  const auth = await keys.authenticate(presented.key);
  // The query string is the form that ends up in public URLs; header and body keys stay private.
  if (auth.requireSignedLinks && presented.source === 'query') throw errors.signatureRequired();
  return auth;
}

/**
 * API key from `apiKey` (query or POST body) or `X-API-Key`; both are equivalent (spec, Authentication).
 * With `signedLinks`, a GET may instead carry a signed link: keyId, optional expires, signature (last).
 */
export function authenticate(keys: ApiKeyService, options: { requireHttps: boolean; signedLinks?: boolean }): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    // The /mcp face's own calls come over loopback, after its request passed this check (mcp/loopback.ts).
    if (options.requireHttps && !req.secure && !isMcpLoopback(req)) {
      next(
        new ApiError('HTTPS_REQUIRED', 'API keys must be sent over HTTPS; this request arrived over plain HTTP. Use the https:// address.'),
      );
      return;
    }
    authenticateRequest(keys, req, Boolean(options.signedLinks))
      .then((auth) => {
        contextOf(req.res!).auth = auth;
        next();
      })
      .catch(next);
  };
}

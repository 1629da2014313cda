import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ApiKeyService } from '../services/api-keys.js';
import { ApiError } from '../errors.js';
import { contextOf } from './request-context.js';

function presentedKey(req: Request): string | undefined {
  const fromQuery = typeof req.query.apiKey === 'string' ? req.query.apiKey : undefined;
  const fromBody = req.body && typeof req.body === 'object' && typeof req.body.apiKey === 'string' ? (req.body.apiKey as string) : undefined;
  const fromHeader = req.get('x-api-key');
  return fromQuery ?? fromBody ?? fromHeader;
}

/** API key from `apiKey` (query or POST body) or `X-API-Key`; both are equivalent (spec, Authentication). */
export function authenticate(keys: ApiKeyService, options: { requireHttps: boolean }): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (options.requireHttps && !req.secure) {
      next(new ApiError('HTTPS_REQUIRED', 'API keys must be sent over HTTPS; this request arrived over plain HTTP. Use the https:// address.'));
      return;
    }
    keys
      .authenticate(presentedKey(req))
      .then((auth) => {
        contextOf(req.res!).auth = auth;
        next();
      })
      .catch(next);
  };
}

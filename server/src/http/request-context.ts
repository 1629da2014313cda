import type { Response } from 'express';
import type { AuthenticatedKey } from '../services/api-keys.js';

/** What the middleware chain learns about a request, kept on `res.locals` (typed here). */
export interface RequestContext {
  requestId: string;
  auth?: AuthenticatedKey;
}

export function contextOf(res: Response): RequestContext {
  return (res.locals as { daguerre: RequestContext }).daguerre;
}

import { ApiError } from '../../errors.js';

/**
 * What a failed capture knew about its target (issue #30): X-Target-Status and X-Final-Url go on
 * every answer where they are known, failures included (a 502 for failOnHttpError, a 403 for a
 * protected target, a 504 after the page answered). An ApiError carries them in its options; any
 * other error (a stage's timeout, mapped to its answer later) carries them here.
 */
const carried = new WeakMap<object, Record<string, string>>();

export function withTargetHeaders<E>(error: E, headers: Record<string, string>): E {
  if (Object.keys(headers).length === 0 || typeof error !== 'object' || error === null) return error;
  if (error instanceof ApiError) error.options.headers = { ...headers, ...error.options.headers };
  else carried.set(error, { ...headers, ...carried.get(error) });
  return error;
}

/** The target headers an error picked up on its way out of the renderer. */
export function targetHeadersOf(error: unknown): Record<string, string> | undefined {
  if (error instanceof ApiError) return error.options.headers;
  return typeof error === 'object' && error !== null ? carried.get(error) : undefined;
}

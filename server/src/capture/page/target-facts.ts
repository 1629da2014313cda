import { CaptureError } from '../capture-error.js';

/**
 * What a failed capture knew about its target: X-Target-Status and X-Final-Url go on every answer
 * where they are known, failures included (failOnHttpError, a protected target, a timeout after
 * the page answered). A CaptureError carries them itself; any other error (a stage's
 * timeout, mapped to its answer later by services/capture-failures.ts) carries them here.
 */
const carried = new WeakMap<object, Record<string, string>>();

export function withTargetHeaders<E>(error: E, headers: Record<string, string>): E {
  if (Object.keys(headers).length === 0 || typeof error !== 'object' || error === null) return error;
  if (error instanceof CaptureError) error.targetHeaders = { ...headers, ...error.targetHeaders };
  else carried.set(error, { ...headers, ...carried.get(error) });
  return error;
}

/** The target headers an error picked up on its way out of the renderer. */
export function targetHeadersOf(error: unknown): Record<string, string> | undefined {
  if (error instanceof CaptureError) return error.targetHeaders;
  return typeof error === 'object' && error !== null ? carried.get(error) : undefined;
}

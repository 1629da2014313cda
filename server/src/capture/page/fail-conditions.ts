import type { CaptureOptions } from '@daguerre/contract';
import type { HTTPResponse } from 'puppeteer-core';
import { CaptureError } from '../capture-error.js';

/**
 * failOnHttpError: a 4xx or 5xx main document fails the capture before anything is rendered (so
 * nothing is charged). Reads only the navigation response's status, so that it can later share
 * the page report's view of the target status.
 */
export function assertTargetStatus(response: HTTPResponse | null, options: Pick<CaptureOptions, 'failOnHttpError'>): void {
  if (!options.failOnHttpError || response === null) return;
  const status = response.status();
  if (status < 400) return;
  throw new CaptureError('target-http-error', `The target answered HTTP ${status} and failOnHttpError is true; nothing was charged`, {
    details: { status },
  });
}

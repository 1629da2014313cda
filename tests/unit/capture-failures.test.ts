import { ERROR_CATALOG } from '@daguerre/contract';
import { describe, expect, it } from 'vitest';
import { CAPTURE_ERROR_KINDS, CaptureError, CaptureTimeoutError, type CaptureErrorKind } from '../../server/src/capture/capture-error.js';
import { withTargetHeaders } from '../../server/src/capture/page/target-facts.js';
import { ApiError } from '../../server/src/errors.js';
import { CAPTURE_ERROR_CODES, captureFailure } from '../../server/src/services/capture-failures.js';

/** The capture layer's own errors and the one table that turns them into the contract's answers. */
const KINDS = Object.keys(CAPTURE_ERROR_KINDS) as CaptureErrorKind[];

describe('capture error kinds', () => {
  it('map every kind to a contract code, and the input/ours split to 4xx/5xx', () => {
    expect(Object.keys(CAPTURE_ERROR_CODES).sort()).toEqual([...KINDS].sort());
    for (const kind of KINDS) {
      const code = CAPTURE_ERROR_CODES[kind];
      expect(ERROR_CATALOG[code], kind).toBeDefined();
      const answer = captureFailure(new CaptureError(kind, `a ${kind}`), 1_000);
      expect(answer.code, kind).toBe(code);
      expect(answer.status, kind).toBe(ERROR_CATALOG[code].status);
      expect(answer.message).toBe(`a ${kind}`);
      // The caller's input (and a target's final answer) is a 4xx; a failure of ours, the browser's or the way to the target a 5xx.
      expect(answer.status < 500 ? 'input' : 'ours', kind).toBe(CAPTURE_ERROR_KINDS[kind].fault);
      expect(new CaptureError(kind, 'x').fault).toBe(CAPTURE_ERROR_KINDS[kind].fault);
    }
  });

  it('keep the message, details, Retry-After, log detail and target headers on the answer', () => {
    const error = new CaptureError(
      'target-unreachable',
      'The page could not be loaded: example.test did not answer (net::ERR_CONNECTION_REFUSED); nothing was charged',
      {
        details: { host: 'example.test', error: 'net::ERR_CONNECTION_REFUSED', url: 'https://example.test/' },
        targetHeaders: { 'X-Final-Url': 'https://example.test/' },
      },
    );
    withTargetHeaders(error, { 'X-Target-Status': '200', 'X-Final-Url': 'https://example.test/other' });
    const answer = captureFailure(error, 30_000);
    expect(answer).toBeInstanceOf(ApiError);
    expect(answer.status).toBe(500);
    expect(answer.toBody()).toEqual({
      success: false,
      error: {
        code: 'OPERATION_FAILED',
        message: error.message,
        details: { host: 'example.test', error: 'net::ERR_CONNECTION_REFUSED', url: 'https://example.test/' },
      },
    });
    // The error's own header wins over what the renderer knew, in the same order as before.
    expect(answer.options.headers).toEqual({ 'X-Target-Status': '200', 'X-Final-Url': 'https://example.test/' });
    expect(Object.keys(answer.options.headers!)).toEqual(['X-Target-Status', 'X-Final-Url']);

    const cause = new Error('filter lists missing');
    const busy = captureFailure(
      new CaptureError('filters-unavailable', 'removeAds is unavailable', { retryAfterSeconds: 5, logDetail: cause }),
      30_000,
    );
    expect(busy.status).toBe(503);
    expect(busy.options.retryAfterSeconds).toBe(5);
    expect(busy.options.logDetail).toBe(cause);
    expect(busy.toBody().error).not.toHaveProperty('details');
    expect(busy.options).not.toHaveProperty('headers');
  });

  it('keep the target headers a timeout picked up in the renderer', () => {
    const timeout = withTargetHeaders(new CaptureTimeoutError('capturing'), { 'X-Target-Status': '200' });
    const answer = captureFailure(timeout, 30_000);
    expect(answer.code).toBe('CAPTURE_TIMEOUT');
    expect(answer.options.headers).toEqual({ 'X-Target-Status': '200' });
  });
});

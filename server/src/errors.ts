import { ERROR_CATALOG, type ErrorBody, type ErrorCode, type ValidationIssue } from '@daguerre/contract';

/**
 * The one error type the HTTP layer turns into the API's error body. `message` is safe for the
 * client; `logDetail` is for the operator's log only and never leaves the server.
 */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: {
      details?: ErrorBody['error']['details'];
      logDetail?: unknown;
      retryAfterSeconds?: number;
      status?: number;
      /** Response headers of the error answer (X-Target-Status and X-Final-Url of a failed capture). */
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    // `status` overrides the code's usual one where HTTP needs a finer answer (415 for a body's charset).
    this.status = options.status ?? ERROR_CATALOG[code].status;
  }

  get details() {
    return this.options.details;
  }

  toBody(): ErrorBody {
    return {
      success: false,
      error: { code: this.code, message: this.message, ...(this.details !== undefined ? { details: this.details } : {}) },
    };
  }
}

export function validationError(
  issues: ValidationIssue[],
  code: 'VALIDATION_ERROR' | 'MISSING_REQUIRED_FIELD' = 'VALIDATION_ERROR',
): ApiError {
  // Two fields can fail for one reason (url and html together): the summary says it once.
  const summary = [...new Set(issues.map((i) => i.message))].join('; ');
  const prefix = code === 'MISSING_REQUIRED_FIELD' ? 'Missing required field' : 'Validation failed';
  return new ApiError(code, `${prefix}: ${summary}`, { details: issues });
}

export const errors = {
  apiKeyRequired: () => new ApiError('API_KEY_REQUIRED', 'API key required'),
  invalidApiKey: () => new ApiError('INVALID_API_KEY', 'Invalid API key'),
  apiKeyExpired: () => new ApiError('API_KEY_EXPIRED', 'API key expired'),
  invalidSignature: (why: string) =>
    new ApiError(
      'INVALID_SIGNATURE',
      `Invalid signature: ${why}. A signed link ends with keyId, the optional expires and signature (last), the lowercase hex HMAC-SHA256 of the query string before &signature=`,
    ),
  signedLinkExpired: () => new ApiError('SIGNED_LINK_EXPIRED', 'Signed link expired: its expires parameter is in the past'),
  signatureRequired: () =>
    new ApiError(
      'SIGNATURE_REQUIRED',
      'This organization requires signed links: send the key in header X-API-Key or use a signed link (keyId, expires, signature) instead of apiKey in the query string',
    ),
  insufficientCredits: (remaining: number, cost: number) =>
    new ApiError('INSUFFICIENT_CREDITS', `Not enough credits: this capture costs ${cost}, ${remaining} remaining in the current period`),
  /** `nothingWas` says what the refused request did not do: charged by default, or queued. */
  storeUnavailable: (what: string, cause: unknown, nothingWas = 'charged') =>
    new ApiError(
      'SERVICE_UNAVAILABLE',
      `Service temporarily unavailable: the ${what} cannot be reached; nothing was ${nothingWas}. Retry shortly.`,
      {
        logDetail: cause,
        retryAfterSeconds: 5,
      },
    ),
};

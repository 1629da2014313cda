import type { ErrorBody, ErrorCode, ValidationIssue } from '@rendershot/contract';

const STATUS_OF: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  MISSING_REQUIRED_FIELD: 400,
  INVALID_INPUT: 400,
  NO_ORGANIZATION_CONTEXT: 400,
  HTTPS_REQUIRED: 400,
  API_KEY_REQUIRED: 401,
  INVALID_API_KEY: 401,
  API_KEY_EXPIRED: 401,
  INSUFFICIENT_CREDITS: 402,
  TARGET_PROTECTED: 403,
  MEMBERSHIP_INACTIVE: 403,
  NOT_FOUND: 404,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  OPERATION_FAILED: 500,
  SERVICE_UNAVAILABLE: 503,
  CAPTURE_TIMEOUT: 504,
  JOB_NOT_FINISHED: 409,
};

/**
 * The one error type the HTTP layer turns into the spec's error body. `message` is safe for the
 * client; `logDetail` is for the operator's log only and never leaves the server.
 */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { details?: ErrorBody['error']['details']; logDetail?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.status = STATUS_OF[code];
  }

  get details() {
    return this.options.details;
  }

  toBody(): ErrorBody {
    return { success: false, error: { code: this.code, message: this.message, ...(this.details !== undefined ? { details: this.details } : {}) } };
  }
}

export function validationError(issues: ValidationIssue[], code: 'VALIDATION_ERROR' | 'MISSING_REQUIRED_FIELD' = 'VALIDATION_ERROR'): ApiError {
  const summary = issues.map((i) => i.message).join('; ');
  const prefix = code === 'MISSING_REQUIRED_FIELD' ? 'Missing required field' : 'Validation failed';
  return new ApiError(code, `${prefix}: ${summary}`, { details: issues });
}

export const errors = {
  apiKeyRequired: () => new ApiError('API_KEY_REQUIRED', 'API key required'),
  invalidApiKey: () => new ApiError('INVALID_API_KEY', 'Invalid API key'),
  apiKeyExpired: () => new ApiError('API_KEY_EXPIRED', 'API key expired'),
  insufficientCredits: (remaining: number, cost: number) =>
    new ApiError('INSUFFICIENT_CREDITS', `Not enough credits: this capture costs ${cost}, ${remaining} remaining in the current period`),
  storeUnavailable: (what: string, cause: unknown) =>
    new ApiError('SERVICE_UNAVAILABLE', `Service temporarily unavailable: the ${what} cannot be reached; nothing was charged. Retry shortly.`, {
      logDetail: cause,
      retryAfterSeconds: 5,
    }),
};

import { ErrorBodySchema, type ErrorBody, type ErrorCode } from '@daguerre/contract';
import { parseRetryAfterSeconds } from './retry.js';

/** The `details` member of the API's error body: validation issues, a string or an object. */
export type ErrorDetails = ErrorBody['error']['details'];

export interface DaguerreErrorInit {
  status: number;
  code: ErrorCode;
  message: string;
  details?: ErrorDetails;
  retryAfterSeconds?: number;
  headers: Record<string, string>;
}

/**
 * Every non-2xx answer of the service, typed by the contract's error body so callers can branch on
 * `code` (e.g. `VALIDATION_ERROR` with per-field `details`) instead of parsing messages.
 */
export class DaguerreError extends Error {
  override readonly name = 'DaguerreError';
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  /** From `Retry-After`, when the service sent one (429 and 503). */
  readonly retryAfterSeconds: number | undefined;
  /** Response headers, lower-cased names (includes `x-ratelimit-*`). */
  readonly headers: Record<string, string>;

  constructor(init: DaguerreErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.headers = init.headers;
  }
}

export function headersToRecord(headers: Headers): Record<string, string> {
  return Object.fromEntries(headers.entries());
}

/**
 * Builds the error for a non-2xx response. The body is read as text first because proxies and
 * crashed upstreams answer with HTML or nothing; those become INTERNAL_ERROR with the real status
 * rather than a JSON parse failure that hides it.
 */
export async function errorFromResponse(response: Response): Promise<DaguerreError> {
  const headers = headersToRecord(response.headers);
  const retryAfterSeconds = parseRetryAfterSeconds(response.headers.get('retry-after'));
  const text = await response.text().catch(() => '');
  const parsed = ErrorBodySchema.safeParse(parseJson(text));
  if (parsed.success) {
    const { code, message, details } = parsed.data.error;
    return new DaguerreError({ status: response.status, code, message, details, retryAfterSeconds, headers });
  }
  const snippet = text.trim().slice(0, 200);
  return new DaguerreError({
    status: response.status,
    code: 'INTERNAL_ERROR',
    message: `HTTP ${response.status} ${response.statusText}`.trim() + (snippet ? `: ${snippet}` : ''),
    retryAfterSeconds,
    headers,
  });
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

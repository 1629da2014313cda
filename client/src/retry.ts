/** Opt-in retry of throttled (429) and temporarily unavailable (503) responses. */
export interface RetryOptions {
  /** How many times a 429 or 503 is retried before its DaguerreError is thrown. */
  maxRetries: number;
  /** Upper bound of one wait, in ms, whatever `Retry-After` asks for. Default 30000. */
  maxDelayMs?: number;
}

export const DEFAULT_MAX_DELAY_MS = 30_000;
/** Wait used when a 429/503 carries no usable Retry-After; doubled on each attempt. */
const FALLBACK_DELAY_MS = 1_000;
const RETRYABLE_STATUSES = new Set([429, 503]);

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/** `Retry-After` is either delta-seconds or an HTTP date (RFC 9110 §10.2.3); both are accepted. */
export function parseRetryAfterSeconds(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** Delay before retry number `attempt` (0-based). */
export function retryDelayMs(retryAfterSeconds: number | undefined, attempt: number, maxDelayMs: number): number {
  const wanted = retryAfterSeconds === undefined ? FALLBACK_DELAY_MS * 2 ** attempt : retryAfterSeconds * 1000;
  return Math.min(Math.max(0, wanted), maxDelayMs);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

import type { CaptureLogQuery, LoggedCapture } from '@daguerre/contract';
import type { Logger } from 'pino';
import { ApiError, validationError } from '../errors.js';
import { decodePageCursor, encodePageCursor } from './page-cursor.js';
import { redactUrl } from '../logger.js';
import { SWEEP_BATCH, type RefusedCapture, type RequestLogRepository } from '../store/request-log-repository.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/**
 * The URL of a capture as the request log keeps it: what the server log shows (secret query values,
 * credentials and key-shaped text masked), so the log holds nothing the log file would not.
 */
export function loggableTarget(url: string): string {
  return redactUrl(url).slice(0, 2048);
}

export interface RequestLogOptions {
  retentionDays: number;
  /** Refusals logged per API key and minute on this instance; a flood beyond it is counted, not written. */
  refusalsPerMinute: number;
  /** How often this instance sweeps rows past the retention. */
  sweepIntervalMs: number;
  logger: Logger;
  now?: () => number;
}

/** The filters of a page (GET /captures without its key). */
export type CaptureLogFilters = Omit<CaptureLogQuery, 'apiKey'>;

/** A page of the log as the contract answers it. */
export interface CaptureLogPageData {
  captures: LoggedCapture[];
  nextCursor: string | null;
  retentionDays: number;
}

/**
 * The request log's use cases: refusals written (capped per key, so a client hammering the rate
 * limit cannot turn each refused request into a database write), pages read with an opaque cursor,
 * and the retention swept.
 */
export class RequestLog {
  private readonly refusalsThisMinute = new Map<string, number>();
  private minute = -1;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;

  constructor(
    private readonly repository: RequestLogRepository,
    private readonly options: RequestLogOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  get retentionDays(): number {
    return this.options.retentionDays;
  }

  /** Writes a refusal unless its key has had its share this minute; never throws (the answer is already sent). */
  async refused(refusal: RefusedCapture): Promise<void> {
    const minute = Math.floor(this.now() / MINUTE_MS);
    if (minute !== this.minute) {
      this.minute = minute;
      this.refusalsThisMinute.clear();
    }
    const owner = refusal.apiKeyId ?? refusal.organizationId;
    const count = (this.refusalsThisMinute.get(owner) ?? 0) + 1;
    this.refusalsThisMinute.set(owner, count);
    if (count > this.options.refusalsPerMinute) return;
    await this.repository
      .recordRefusal(refusal)
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error, requestId: refusal.requestId }, 'could not write a refused capture to the request log'),
      );
  }

  /** One page of the log, as GET /captures answers it. */
  page(organizationId: string, query: CaptureLogFilters): Promise<CaptureLogPageData> {
    return captureLogPage(this.repository, organizationId, query, this.options.retentionDays);
  }

  /** Sweeps now and then every sweepIntervalMs; a failed sweep is logged and tried again at the next. */
  start(): void {
    const sweepOnce = () => {
      this.sweeping ??= this.sweep()
        .then(
          (deleted) =>
            deleted > 0 &&
            this.options.logger.info({ deleted, retentionDays: this.options.retentionDays }, 'request log: swept rows past the retention'),
          (error: unknown) => this.options.logger.warn({ err: error }, 'request log: sweep failed; retrying at the next interval'),
        )
        .finally(() => (this.sweeping = undefined));
    };
    sweepOnce();
    this.timer ??= setInterval(sweepOnce, this.options.sweepIntervalMs);
    // The sweep never keeps the process alive by itself.
    this.timer.unref();
  }

  /** Stops the timer and waits for a sweep under way, so the database can close after it. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /** Deletes what is older than the retention; returns how many rows went. */
  async sweep(): Promise<number> {
    const before = this.now() - this.options.retentionDays * DAY_MS;
    let total = 0;
    for (;;) {
      const deleted = await this.repository.sweep(before);
      total += deleted;
      if (deleted < SWEEP_BATCH) return total;
    }
  }
}

/**
 * One page of an organization's log, newest first, with the cursor of the next: the same answer for
 * GET /captures, the MCP tool and the dashboard.
 */
export async function captureLogPage(
  repository: RequestLogRepository,
  organizationId: string,
  query: CaptureLogFilters,
  retentionDays: number,
): Promise<CaptureLogPageData> {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  // One more row than asked says whether there is a next page, without a count.
  const rows = await repository
    .list({
      organizationId,
      limit: query.limit + 1,
      ...(query.status ? { status: query.status } : {}),
      ...(query.keyId ? { keyId: query.keyId } : {}),
      ...(query.from ? { from: Date.parse(query.from) } : {}),
      ...(query.to ? { to: Date.parse(query.to) } : {}),
      ...(after ? { after } : {}),
    })
    .catch((error: unknown) => {
      throw new ApiError('SERVICE_UNAVAILABLE', 'Service temporarily unavailable: the database cannot be reached. Retry shortly.', {
        logDetail: error,
        retryAfterSeconds: 5,
      });
    });
  const shown = rows.slice(0, query.limit);
  const last = shown.at(-1);
  return {
    captures: shown.map(({ keyPrefix: _prefix, createdAt, finishedAt, requestId, ...row }) => ({
      requestId,
      createdAt: new Date(createdAt).toISOString(),
      finishedAt: finishedAt === null ? null : new Date(finishedAt).toISOString(),
      ...row,
    })),
    nextCursor: rows.length > query.limit && last ? encodePageCursor(last.createdAt, last.requestId) : null,
    retentionDays,
  };
}

function decodeCursor(cursor: string): { createdAt: number; requestId: string } {
  const row = decodePageCursor(cursor, /[0-9a-zA-Z-]{1,64}/);
  if (!row) {
    throw validationError([
      { field: 'cursor', message: 'cursor must be the nextCursor of a previous page of GET /captures', value: cursor.slice(0, 200) },
    ]);
  }
  return { createdAt: row.at, requestId: row.id };
}

import type { CaptureKind, LoggedCaptureStatus } from '@daguerre/contract';
import type { Knex } from 'knex';
import { numberOrNull, type Database } from './database.js';

/**
 * The request log, read from (and for refusals, written to) the capture ledger: a capture that
 * reserved credits has its ledger row already, so logging it costs no extra write; only a capture
 * refused before any reservation gets a row of its own here.
 */

/** The ledger's states as the log names them. */
const STATUS_OF_LEDGER: Record<string, LoggedCaptureStatus> = {
  reserved: 'running',
  charged: 'succeeded',
  cache_hit: 'cached',
  released: 'failed',
  refused: 'refused',
};
const LEDGER_OF_STATUS = Object.fromEntries(Object.entries(STATUS_OF_LEDGER).map(([ledger, status]) => [status, ledger])) as Record<
  LoggedCaptureStatus,
  string
>;

export interface RefusedCapture {
  requestId: string;
  organizationId: string;
  apiKeyId: string | null;
  kind: CaptureKind;
  format: string;
  source: 'url' | 'html';
  target: string | null;
  errorCode: string;
  httpStatus: number;
  durationMs: number;
  at: number;
  /** The async job it belongs to. */
  jobId?: string;
}

export interface CaptureLogFilter {
  organizationId: string;
  status?: LoggedCaptureStatus;
  keyId?: string;
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
  /** The last row of the previous page: rows strictly older come next. */
  after?: { createdAt: number; requestId: string };
  limit: number;
}

export interface CaptureLogRow {
  requestId: string;
  createdAt: number;
  finishedAt: number | null;
  keyId: string | null;
  keyName: string | null;
  keyPrefix: string | null;
  kind: CaptureKind;
  source: 'url' | 'html';
  target: string | null;
  format: string;
  status: LoggedCaptureStatus;
  httpStatus: number | null;
  errorCode: string | null;
  credits: number;
  durationMs: number | null;
  fileSize: number | null;
  jobId: string | null;
}

/** Rows one sweep call deletes at most: a first sweep of a large table holds no long lock. */
export const SWEEP_BATCH = 5_000;

export class RequestLogRepository {
  constructor(private readonly db: Database) {}

  private get knex(): Knex {
    return this.db.knex;
  }

  /**
   * A capture refused before it reserved anything. Ignored when the request id has a row already
   * (the capture did reserve, and its own row says how it ended).
   */
  async recordRefusal(refusal: RefusedCapture): Promise<void> {
    await this.knex('capture_ledger')
      .insert({
        request_id: refusal.requestId,
        organization_id: refusal.organizationId,
        api_key_id: refusal.apiKeyId,
        status: 'refused',
        format: refusal.format.slice(0, 10),
        source: refusal.source,
        target_host: hostOf(refusal.target),
        target: refusal.target?.slice(0, 2048) ?? null,
        credits: 0,
        processing_ms: refusal.durationMs,
        error_code: refusal.errorCode.slice(0, 40),
        http_status: refusal.httpStatus,
        kind: refusal.kind,
        mode: refusal.kind === 'sync' || refusal.kind === 'mcp' ? 'sync' : 'async',
        job_id: refusal.jobId ?? null,
        created_at: refusal.at,
        finished_at: refusal.at + refusal.durationMs,
      })
      .onConflict('request_id')
      .ignore();
  }

  /** One page of the log, newest first (created_at, then request id, both descending: a stable order for the cursor). */
  async list(filter: CaptureLogFilter): Promise<CaptureLogRow[]> {
    const query = this.knex('capture_ledger as l')
      .leftJoin('api_keys as k', 'k.id', 'l.api_key_id')
      .where('l.organization_id', filter.organizationId)
      .orderBy([
        { column: 'l.created_at', order: 'desc' },
        { column: 'l.request_id', order: 'desc' },
      ])
      .limit(filter.limit)
      .select(
        'l.request_id',
        'l.created_at',
        'l.finished_at',
        'l.api_key_id',
        'k.name as key_name',
        'k.prefix as key_prefix',
        'l.kind',
        'l.mode',
        'l.source',
        'l.target',
        'l.target_host',
        'l.format',
        'l.status',
        'l.http_status',
        'l.error_code',
        'l.credits',
        'l.processing_ms',
        'l.file_size',
        'l.job_id',
      );
    if (filter.status) query.andWhere('l.status', LEDGER_OF_STATUS[filter.status]);
    if (filter.keyId) query.andWhere('l.api_key_id', filter.keyId);
    if (filter.from !== undefined) query.andWhere('l.created_at', '>=', filter.from);
    if (filter.to !== undefined) query.andWhere('l.created_at', '<', filter.to);
    const after = filter.after;
    if (after) {
      query.andWhere((older) => {
        older.where('l.created_at', '<', after.createdAt).orWhere((same) => {
          same.where('l.created_at', '=', after.createdAt).andWhere('l.request_id', '<', after.requestId);
        });
      });
    }
    const rows = (await query) as Record<string, unknown>[];
    return rows.map((row) => ({
      requestId: String(row.request_id),
      createdAt: Number(row.created_at),
      finishedAt: numberOrNull(row.finished_at),
      keyId: (row.api_key_id as string | null) ?? null,
      keyName: (row.key_name as string | null) ?? null,
      keyPrefix: (row.key_prefix as string | null) ?? null,
      kind: kindOf(row),
      source: row.source === 'html' ? 'html' : 'url',
      target: (row.target as string | null) ?? (row.target_host ? `${String(row.target_host)}` : null),
      format: String(row.format),
      status: STATUS_OF_LEDGER[String(row.status)] ?? 'failed',
      httpStatus: numberOrNull(row.http_status),
      errorCode: (row.error_code as string | null) ?? null,
      credits: row.status === 'released' || row.status === 'refused' ? 0 : Number(row.credits),
      durationMs: numberOrNull(row.processing_ms),
      fileSize: numberOrNull(row.file_size),
      jobId: (row.job_id as string | null) ?? null,
    }));
  }

  /**
   * Deletes log rows older than `before` (never a reservation still open: its credits are the
   * sweeper's), at most `limit` per call so a first sweep of a large table holds no long lock.
   * Returns how many went.
   */
  async sweep(before: number, limit = SWEEP_BATCH): Promise<number> {
    const old = await this.knex('capture_ledger')
      .where('created_at', '<', before)
      .andWhereNot('status', 'reserved')
      .orderBy('created_at')
      .limit(limit)
      .pluck('request_id');
    if (old.length === 0) return 0;
    let deleted = 0;
    // Chunks below SQLite's and MySQL's placeholder limits.
    for (let i = 0; i < old.length; i += 500) {
      const chunk = old.slice(i, i + 500);
      deleted += Number(await this.knex('capture_ledger').whereIn('request_id', chunk).andWhereNot('status', 'reserved').delete());
    }
    return deleted;
  }
}

/** Rows written before the log existed have the default kind and only the old sync/async mode. */
function kindOf(row: Record<string, unknown>): CaptureKind {
  const kind = (row.kind as CaptureKind | null) ?? 'sync';
  return kind === 'sync' && row.mode === 'async' ? 'async' : kind;
}

/** The host of a logged target, for the old column the usage page reads. */
function hostOf(target: string | null): string | null {
  if (!target) return null;
  try {
    return new URL(target).host.slice(0, 255) || null;
  } catch {
    return null;
  }
}

import type { CreditRepository } from '../store/credit-repository.js';
import type { Database } from '../store/database.js';

const DAY_MS = 86_400_000;

/** Captures of one UTC day, by outcome. */
export interface DailyCaptures {
  /** Start of the day, epoch ms (UTC midnight). */
  day: number;
  /** Charged captures. */
  charged: number;
  /** Answers from the response cache (not charged). */
  cached: number;
  /** Failed captures (released, not charged). */
  failed: number;
  credits: number;
}

export interface LedgerRow {
  requestId: string;
  apiKeyId: string | null;
  status: string;
  format: string;
  source: string;
  /** `async` for a job of POST /captures. */
  mode: 'sync' | 'async';
  targetHost: string | null;
  credits: number;
  processingMs: number | null;
  fileSize: number | null;
  errorCode: string | null;
  createdAt: number;
}

const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/** The ledger's newest rows, typed for the usage page. */
export async function latestCaptures(credits: CreditRepository, organizationId: string, limit = 20): Promise<LedgerRow[]> {
  const rows = await credits.ledger(organizationId, limit);
  return rows.map((row) => ({
    requestId: row.request_id,
    apiKeyId: row.api_key_id,
    status: row.status,
    format: row.format,
    source: row.source,
    mode: row.mode === 'async' ? 'async' : 'sync',
    targetHost: row.target_host,
    credits: Number(row.credits),
    processingMs: numberOrNull(row.processing_ms),
    fileSize: numberOrNull(row.file_size),
    errorCode: row.error_code,
    createdAt: Number(row.created_at),
  }));
}

/**
 * Captures per UTC day from `start` (inclusive) to `end` (exclusive), one entry per day even when
 * empty. Counted in SQL (GROUP BY day number), so a busy month stays one small result set.
 */
export async function capturesPerDay(db: Database, organizationId: string, start: number, end: number): Promise<DailyCaptures[]> {
  const dayExpression = db.dialect === 'mysql' ? 'created_at DIV 86400000' : 'created_at / 86400000';
  const rows = await db
    .knex('capture_ledger')
    .where('organization_id', organizationId)
    .andWhere('created_at', '>=', start)
    .andWhere('created_at', '<', end)
    .groupByRaw(`${dayExpression}, status`)
    .select(db.knex.raw(`${dayExpression} as day_number`), 'status')
    .count({ n: '*' })
    .sum({ credits: 'credits' });
  const byDay = new Map<number, DailyCaptures>();
  const firstDay = Math.floor(start / DAY_MS);
  const lastDay = Math.floor((end - 1) / DAY_MS);
  for (let day = firstDay; day <= lastDay; day += 1) byDay.set(day, { day: day * DAY_MS, charged: 0, cached: 0, failed: 0, credits: 0 });
  for (const row of rows as { day_number: number | string; status: string; n: number | string; credits: number | string | null }[]) {
    const entry = byDay.get(Number(row.day_number));
    if (!entry) continue;
    const n = Number(row.n);
    if (row.status === 'charged') {
      entry.charged += n;
      entry.credits += Number(row.credits ?? 0);
    } else if (row.status === 'cache_hit') entry.cached += n;
    else if (row.status === 'released') entry.failed += n;
  }
  return [...byDay.values()];
}

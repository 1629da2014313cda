import type { Database } from '../store/database.js';
import { DAY_MS } from './usage-period.js';

/** What was asked of the service, by outcome: by one key on one day, or over a period. */
export interface Outcomes {
  /** Captures that succeeded and used credits. */
  charged: number;
  /** Answers from the response cache (free). */
  cached: number;
  /** Captures that failed after their credits were reserved (given back, free). */
  failed: number;
  /** Captures refused before any credit was reserved: bad input, no credits left, the rate limit. */
  refused: number;
  /** Credits used: those of the charged captures only. */
  credits: number;
}

export interface KeyUsage {
  /** null for captures recorded without a key. */
  apiKeyId: string | null;
  /** One entry per day of the period, in the order of `UsageByKey.days`. */
  perDay: Outcomes[];
  total: Outcomes;
}

export interface UsageByKey {
  /** Start of each UTC day of the period, epoch ms, oldest first. */
  days: number[];
  /** Keys with anything counted in the period, busiest first. */
  keys: KeyUsage[];
  total: Outcomes;
}

/** One row of the grouped query: a (day, key, status) and how many ledger rows it holds. */
export interface UsageCount {
  /** UTC day number (days since the epoch). */
  dayNumber: number;
  apiKeyId: string | null;
  status: string;
  count: number;
  credits: number;
}

/**
 * Ledger states counted, and the outcome each one is. `reserved` is left out: that capture is
 * still running, and it is counted under its outcome once it settles.
 */
const OUTCOME_OF_STATUS: Record<string, Exclude<keyof Outcomes, 'credits'>> = {
  charged: 'charged',
  cache_hit: 'cached',
  released: 'failed',
  refused: 'refused',
};

export const noOutcomes = (): Outcomes => ({ charged: 0, cached: 0, failed: 0, refused: 0, credits: 0 });

/** Every request counted, whatever its outcome. */
export const requestsOf = (o: Outcomes): number => o.charged + o.cached + o.failed + o.refused;

/** Adds `from` into `into` (totals of a key, of a period, of the "Other keys" series). */
export function addOutcomes(into: Outcomes, from: Outcomes): void {
  into.charged += from.charged;
  into.cached += from.cached;
  into.failed += from.failed;
  into.refused += from.refused;
  into.credits += from.credits;
}

/**
 * The ledger's rows from `start` (inclusive) to `end` (exclusive) counted in SQL by UTC day, key
 * and status: at most days × keys × 4 rows come back, however busy the month was. Integer
 * division gives the day on both databases (SQLite divides integers as integers; MySQL needs DIV,
 * its `/` gives a decimal).
 */
export async function countUsage(db: Database, organizationId: string, start: number, end: number): Promise<UsageCount[]> {
  const day = db.dialect === 'mysql' ? 'created_at DIV 86400000' : 'created_at / 86400000';
  const rows = await db
    .knex('capture_ledger')
    .where('organization_id', organizationId)
    .andWhere('created_at', '>=', start)
    .andWhere('created_at', '<', end)
    .whereIn('status', Object.keys(OUTCOME_OF_STATUS))
    .groupByRaw(`${day}, api_key_id, status`)
    .select(db.knex.raw(`${day} as day_number`), 'api_key_id', 'status')
    .count({ n: '*' })
    .sum({ credits: 'credits' });
  // Both drivers may answer numbers as strings (MySQL's COUNT and SUM are BIGINT/DECIMAL).
  return (rows as { day_number: unknown; api_key_id: string | null; status: string; n: unknown; credits: unknown }[]).map((row) => ({
    dayNumber: Number(row.day_number),
    apiKeyId: row.api_key_id ?? null,
    status: row.status,
    count: Number(row.n),
    credits: Number(row.credits ?? 0),
  }));
}

/**
 * The counts laid out for the page: one entry per day of the period even when nothing happened
 * (a chart needs its empty days), per key and in total.
 */
export function foldUsage(counts: UsageCount[], start: number, end: number): UsageByKey {
  const firstDay = Math.floor(start / DAY_MS);
  const lastDay = Math.floor((end - 1) / DAY_MS);
  const days: number[] = [];
  for (let day = firstDay; day <= lastDay; day += 1) days.push(day * DAY_MS);
  const byKey = new Map<string | null, KeyUsage>();
  for (const count of counts) {
    const outcome = OUTCOME_OF_STATUS[count.status];
    const index = count.dayNumber - firstDay;
    if (!outcome || index < 0 || index >= days.length) continue;
    let key = byKey.get(count.apiKeyId);
    if (!key) {
      key = { apiKeyId: count.apiKeyId, perDay: days.map(noOutcomes), total: noOutcomes() };
      byKey.set(count.apiKeyId, key);
    }
    const cell = key.perDay[index]!;
    cell[outcome] += count.count;
    if (outcome === 'charged') cell.credits += count.credits;
  }
  const total = noOutcomes();
  for (const key of byKey.values()) {
    for (const cell of key.perDay) addOutcomes(key.total, cell);
    addOutcomes(total, key.total);
  }
  const keys = [...byKey.values()].sort(
    (a, b) => requestsOf(b.total) - requestsOf(a.total) || String(a.apiKeyId).localeCompare(String(b.apiKeyId)),
  );
  return { days, keys, total };
}

/** Usage per key and per UTC day over a period, counted by the database. */
export async function usageByKey(db: Database, organizationId: string, start: number, end: number): Promise<UsageByKey> {
  return foldUsage(await countUsage(db, organizationId, start, end), start, end);
}

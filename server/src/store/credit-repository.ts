import type { CaptureKind } from '@daguerre/contract';
import type { Knex } from 'knex';
import { errors } from '../errors.js';
import { periodContaining } from './billing-period.js';
import { affected, type Database } from './database.js';

export interface BalanceRow {
  organization_id: string;
  period_start: number;
  period_end: number;
  allocation: number;
  carried_over: number;
  remaining: number;
  reserved: number;
  used: number;
}

export interface LedgerEntry {
  requestId: string;
  organizationId: string;
  apiKeyId: string | null;
  format: string;
  source: 'url' | 'html';
  targetHost: string | null;
  userAgent: string | null;
  /** `async` for a job of POST /captures. */
  mode?: 'sync' | 'async';
  /** The face that sent the capture, for the request log (sync by default). */
  kind?: CaptureKind;
  /** The captured URL as the log may show it (secret query values masked); null for inline HTML. */
  target?: string | null;
  /** Epoch ms at which the capture's own deadline ends; the sweeper leaves the row alone until then. */
  deadline?: number;
  /** The async job this attempt belongs to (its reservations are found, and released, by job id). */
  jobId?: string;
}

export type ReserveOutcome = { reserved: true } | { reserved: false; remaining: number };

export interface CaptureOutcome {
  processingMs: number;
  fileSize: number;
}

/** How a released capture ended, for the request log. */
export interface ReleaseDetail {
  processingMs?: number;
  /** The status its caller was answered. */
  httpStatus?: number;
}

/** Any database failure becomes the client's 503 (nothing charged, retry shortly). */
async function unavailableOnFailure<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw errors.storeUnavailable('database', error);
  }
}

const numeric = (row: Record<string, unknown>): BalanceRow =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [k, k === 'organization_id' ? v : Number(v)])) as unknown as BalanceRow;

/**
 * Credits and the capture ledger. A capture reserves its credits with one conditional UPDATE before
 * any browser work, then commits or releases them; the ledger row's status moves only from
 * `reserved`, which makes commit and release idempotent and never double-charging.
 */
export class CreditRepository {
  constructor(private readonly db: Database) {}

  private get knex(): Knex {
    return this.db.knex;
  }

  async balance(organizationId: string): Promise<BalanceRow | undefined> {
    const row = await this.knex('credit_balances').where('organization_id', organizationId).first();
    return row ? numeric(row) : undefined;
  }

  /**
   * Opens the period that contains the database's now, exactly once across instances: the UPDATE
   * only matches while `period_end` still holds the value we read, so a concurrent roll-over makes
   * ours a no-op. Unused credits carry over only for plans with rollover.
   */
  async rollOverIfDue(organizationId: string): Promise<BalanceRow | undefined> {
    // The balance and the database's clock in one statement: this runs before every capture.
    const found = await this.knex('credit_balances')
      .where('organization_id', organizationId)
      .first('*', this.db.nowMs().wrap('(', ') as db_now'));
    if (!found) return undefined;
    const { db_now: dbNow, ...row } = found as Record<string, unknown>;
    const current = numeric(row);
    const now = Number(dbNow);
    if (now < current.period_end) return current;
    const plan = await this.knex('subscriptions as s')
      .join('plans as p', 'p.id', 's.plan_id')
      .where('s.organization_id', organizationId)
      .first('p.credits_per_month', 'p.rollover');
    const allocation = Number(plan?.credits_per_month ?? current.allocation);
    const carry = plan?.rollover ? 1 : 0;
    const next = periodContaining({ start: current.period_start, end: current.period_end }, now);
    // `remaining` on the right-hand side is the pre-update value on both MySQL and SQLite because
    // it is only assigned after `carried_over` reads it.
    await this.knex('credit_balances')
      .where({ organization_id: organizationId, period_end: current.period_end })
      .update({
        period_start: next.start,
        period_end: next.end,
        allocation,
        carried_over: this.knex.raw('remaining * ?', [carry]),
        remaining: this.knex.raw('? + remaining * ?', [allocation, carry]),
        used: 0,
      });
    return this.balance(organizationId);
  }

  /**
   * Reserves `cost` credits and writes the ledger row in one transaction; never overspends. A
   * database failure here, in commit or in release is the 503 SERVICE_UNAVAILABLE, never a 500.
   */
  async reserve(entry: LedgerEntry, cost: number): Promise<ReserveOutcome> {
    return unavailableOnFailure(() => this.reserveOnce(entry, cost));
  }

  private async reserveOnce(entry: LedgerEntry, cost: number): Promise<ReserveOutcome> {
    await this.rollOverIfDue(entry.organizationId);
    return this.knex.transaction(async (trx) => {
      const updated = await trx('credit_balances')
        .where('organization_id', entry.organizationId)
        .andWhere('remaining', '>=', cost)
        .update({ remaining: trx.raw('remaining - ?', [cost]), reserved: trx.raw('reserved + ?', [cost]) });
      if (affected(updated) !== 1) {
        const row = await trx('credit_balances').where('organization_id', entry.organizationId).first('remaining');
        return { reserved: false as const, remaining: Number(row?.remaining ?? 0) };
      }
      await trx('capture_ledger').insert({
        request_id: entry.requestId,
        organization_id: entry.organizationId,
        api_key_id: entry.apiKeyId,
        status: 'reserved',
        format: entry.format,
        source: entry.source,
        target_host: entry.targetHost,
        credits: cost,
        user_agent: entry.userAgent?.slice(0, 1024) ?? null,
        mode: entry.mode ?? 'sync',
        kind: entry.kind ?? 'sync',
        target: entry.target?.slice(0, 2048) ?? null,
        deadline_at: entry.deadline ?? null,
        ...(entry.jobId ? { job_id: entry.jobId } : {}),
        created_at: Date.now(),
      });
      return { reserved: true as const };
    });
  }

  /** Turns the reservation into a charge. Returns false when it was already settled. */
  async commit(requestId: string, outcome: CaptureOutcome): Promise<boolean> {
    return unavailableOnFailure(() =>
      this.settle(requestId, 'charged', { processing_ms: outcome.processingMs, file_size: outcome.fileSize, http_status: 200 }),
    );
  }

  /** Gives the reserved credits back. Returns false when it was already settled. */
  async release(requestId: string, errorCode: string | null, detail: ReleaseDetail = {}): Promise<boolean> {
    const logged = {
      ...(detail.processingMs !== undefined ? { processing_ms: detail.processingMs } : {}),
      ...(detail.httpStatus !== undefined ? { http_status: detail.httpStatus } : {}),
    };
    return unavailableOnFailure(() => this.settle(requestId, 'released', { error_code: errorCode, ...logged }));
  }

  private async settle(requestId: string, status: 'charged' | 'released', fields: Record<string, unknown>): Promise<boolean> {
    return this.knex.transaction((trx) => this.settleWithin(trx, requestId, status, fields));
  }

  /**
   * Moves a reservation to charged or released inside the caller's transaction (an async job's
   * charge is written with the job's success, as one fact). False when it was already settled.
   */
  async settleWithin(
    trx: Knex.Transaction,
    requestId: string,
    status: 'charged' | 'released',
    fields: Record<string, unknown>,
  ): Promise<boolean> {
    {
      const entry = await trx('capture_ledger').where({ request_id: requestId, status: 'reserved' }).first('organization_id', 'credits');
      if (!entry) return false;
      const moved = await trx('capture_ledger')
        .where({ request_id: requestId, status: 'reserved' })
        .update({ status, finished_at: Date.now(), ...fields });
      if (affected(moved) !== 1) return false;
      const cost = Number(entry.credits);
      const balanceChange =
        status === 'charged'
          ? { reserved: trx.raw('reserved - ?', [cost]), used: trx.raw('used + ?', [cost]) }
          : { reserved: trx.raw('reserved - ?', [cost]), remaining: trx.raw('remaining + ?', [cost]) };
      await trx('credit_balances').where('organization_id', entry.organization_id).update(balanceChange);
      return true;
    }
  }

  /** Reservations still held by attempts of a job (a take-over releases those of the attempts before it). */
  async reservationsOfJob(jobId: string): Promise<string[]> {
    const rows = await this.knex('capture_ledger').where({ job_id: jobId, status: 'reserved' }).select('request_id');
    return rows.map((row) => row.request_id as string);
  }

  /** A cache hit is not a new capture: recorded for the ledger, charged nothing. */
  async recordCacheHit(entry: LedgerEntry, outcome: CaptureOutcome): Promise<void> {
    const now = Date.now();
    await this.knex('capture_ledger').insert({
      request_id: entry.requestId,
      organization_id: entry.organizationId,
      api_key_id: entry.apiKeyId,
      status: 'cache_hit',
      format: entry.format,
      source: entry.source,
      target_host: entry.targetHost,
      mode: entry.mode ?? 'sync',
      kind: entry.kind ?? 'sync',
      target: entry.target?.slice(0, 2048) ?? null,
      http_status: 200,
      ...(entry.jobId ? { job_id: entry.jobId } : {}),
      credits: 0,
      processing_ms: outcome.processingMs,
      file_size: outcome.fileSize,
      user_agent: entry.userAgent?.slice(0, 1024) ?? null,
      created_at: now,
      finished_at: now,
    });
  }

  /**
   * Releases reservations left by a process that died between reserve and commit, or whose own
   * release failed (a database outage): rows whose capture deadline ended more than `marginMs`
   * ago (rows from before deadlines were recorded: older than `olderThanMs`), so captures still
   * allowed to run on any instance are left alone. Safe with many instances sweeping at once: each
   * row moves from `reserved` in one conditional UPDATE inside its transaction, so exactly one
   * sweeper (or the capture itself) settles it and the balance changes once. A row whose release
   * fails stays `reserved` and is retried by the next sweep.
   */
  async releaseStaleReservations(options: { marginMs: number; olderThanMs: number }, limit = 500): Promise<number> {
    const now = Date.now();
    const stale = await this.knex('capture_ledger')
      .where('status', 'reserved')
      .andWhere((rows) => {
        rows.where('deadline_at', '<', now - options.marginMs).orWhere((legacy) => {
          legacy.whereNull('deadline_at').andWhere('created_at', '<', now - options.olderThanMs);
        });
      })
      .orderBy('created_at')
      .limit(limit)
      .select('request_id');
    let released = 0;
    let failed: unknown;
    for (const row of stale) {
      // One row's failure (a deadlock with another sweeper, say) does not hold back the others.
      const settled = await this.settle(row.request_id as string, 'released', { error_code: 'STALE_RESERVATION' }).catch(
        (error: unknown) => {
          failed ??= error;
          return false;
        },
      );
      if (settled) released += 1;
    }
    if (failed !== undefined && released === 0) throw failed;
    return released;
  }

  /** Adds credits to the current period (support, promotions). */
  async grant(organizationId: string, amount: number): Promise<BalanceRow | undefined> {
    await this.rollOverIfDue(organizationId);
    await this.knex('credit_balances')
      .where('organization_id', organizationId)
      .update({ remaining: this.knex.raw('remaining + ?', [amount]) });
    return this.balance(organizationId);
  }

  async ledger(organizationId: string, limit = 100) {
    return this.knex('capture_ledger').where('organization_id', organizationId).orderBy('created_at', 'desc').limit(limit);
  }
}

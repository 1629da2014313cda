import type { Knex } from 'knex';
import { affected, type Database, numberOrNull } from './database.js';

export type PausedReason = 'user' | 'credits';

/** A monitor as it is kept (monitor-migration.ts). */
export interface MonitorRecord {
  id: string;
  organizationId: string;
  apiKeyId: string | null;
  name: string;
  url: string;
  /** The capture options it runs with (those of MONITOR_CAPTURE_FIELDS that were given). */
  options: Record<string, unknown>;
  intervalSeconds: number;
  threshold: number;
  webhookUrl: string | null;
  ignoreSelectors: string[];
  paused: boolean;
  pausedReason: PausedReason | null;
  goldenRunId: string | null;
  baseUrl: string;
  leaseToken: string | null;
  leaseUntil: number | null;
  nextRunAt: number | null;
  lastRunAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export type NewMonitor = Omit<MonitorRecord, 'leaseToken' | 'leaseUntil' | 'lastRunAt' | 'updatedAt' | 'goldenRunId'>;

/** The fields PATCH may change. */
export type MonitorChanges = Partial<
  Pick<
    MonitorRecord,
    | 'name'
    | 'url'
    | 'options'
    | 'intervalSeconds'
    | 'threshold'
    | 'webhookUrl'
    | 'ignoreSelectors'
    | 'paused'
    | 'pausedReason'
    | 'nextRunAt'
  >
>;

function toRecord(row: Record<string, unknown>): MonitorRecord {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    apiKeyId: (row.api_key_id as string | null) ?? null,
    name: String(row.name),
    url: String(row.url),
    options: JSON.parse(String(row.options)) as Record<string, unknown>,
    intervalSeconds: Number(row.interval_seconds),
    threshold: Number(row.threshold),
    webhookUrl: (row.webhook_url as string | null) ?? null,
    ignoreSelectors: JSON.parse(String(row.ignore_selectors)) as string[],
    paused: Boolean(row.paused),
    pausedReason: (row.paused_reason as PausedReason | null) ?? null,
    goldenRunId: (row.golden_run_id as string | null) ?? null,
    baseUrl: String(row.base_url),
    leaseToken: (row.lease_token as string | null) ?? null,
    leaseUntil: numberOrNull(row.lease_until),
    nextRunAt: numberOrNull(row.next_run_at),
    lastRunAt: numberOrNull(row.last_run_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toColumns(changes: MonitorChanges): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  if (changes.name !== undefined) columns.name = changes.name;
  if (changes.url !== undefined) columns.url = changes.url;
  if (changes.options !== undefined) columns.options = JSON.stringify(changes.options);
  if (changes.intervalSeconds !== undefined) columns.interval_seconds = changes.intervalSeconds;
  if (changes.threshold !== undefined) columns.threshold = changes.threshold;
  if (changes.webhookUrl !== undefined) columns.webhook_url = changes.webhookUrl;
  if (changes.ignoreSelectors !== undefined) columns.ignore_selectors = JSON.stringify(changes.ignoreSelectors);
  if (changes.paused !== undefined) columns.paused = changes.paused;
  if (changes.pausedReason !== undefined) columns.paused_reason = changes.pausedReason;
  if (changes.nextRunAt !== undefined) columns.next_run_at = changes.nextRunAt;
  return columns;
}

/** Monitors: their settings, their schedule's truth and the lease that keeps one run at a time. */
export class MonitorRepository {
  private readonly knex: Knex;

  constructor(db: Database) {
    this.knex = db.knex;
  }

  /**
   * Creates the monitor unless the organization already has `limit` of them. The organization's row
   * is locked first (MySQL/MariaDB; SQLite writes one at a time anyway), so two creates at once
   * cannot both pass the count.
   */
  async createWithin(monitor: NewMonitor, limit: number): Promise<{ created: true } | { created: false; count: number }> {
    return this.knex.transaction(async (trx) => {
      await trx('organizations').where('id', monitor.organizationId).forUpdate().first('id');
      const row = await trx('monitors').where('organization_id', monitor.organizationId).count({ n: '*' }).first();
      const count = Number(row?.n ?? 0);
      if (count >= limit) return { created: false as const, count };
      await trx('monitors').insert({
        id: monitor.id,
        organization_id: monitor.organizationId,
        api_key_id: monitor.apiKeyId,
        name: monitor.name,
        url: monitor.url,
        options: JSON.stringify(monitor.options),
        interval_seconds: monitor.intervalSeconds,
        threshold: monitor.threshold,
        webhook_url: monitor.webhookUrl,
        ignore_selectors: JSON.stringify(monitor.ignoreSelectors),
        paused: monitor.paused,
        paused_reason: monitor.pausedReason,
        base_url: monitor.baseUrl,
        next_run_at: monitor.nextRunAt,
        created_at: monitor.createdAt,
        updated_at: monitor.createdAt,
      });
      return { created: true as const };
    });
  }

  async get(id: string): Promise<MonitorRecord | undefined> {
    const row = await this.knex('monitors').where('id', id).first();
    return row ? toRecord(row as Record<string, unknown>) : undefined;
  }

  async list(organizationId: string): Promise<MonitorRecord[]> {
    const rows = await this.knex('monitors').where('organization_id', organizationId).orderBy('created_at', 'desc').orderBy('id');
    return rows.map((row) => toRecord(row as Record<string, unknown>));
  }

  async update(id: string, changes: MonitorChanges, now = Date.now()): Promise<boolean> {
    return (
      affected(
        await this.knex('monitors')
          .where('id', id)
          .update({ ...toColumns(changes), updated_at: now }),
      ) === 1
    );
  }

  async remove(id: string): Promise<void> {
    // Runs go with it (ON DELETE CASCADE is off in SQLite unless asked for; delete them explicitly).
    await this.knex.transaction(async (trx) => {
      await trx('monitor_runs').where('monitor_id', id).delete();
      await trx('monitors').where('id', id).delete();
    });
  }

  /** Every monitor that should have a schedule: the reconcile rebuilds BullMQ's schedulers from these. */
  async active(): Promise<Array<Pick<MonitorRecord, 'id' | 'organizationId' | 'intervalSeconds'>>> {
    const rows = await this.knex('monitors').where('paused', false).select('id', 'organization_id', 'interval_seconds');
    return rows.map((row: Record<string, unknown>) => ({
      id: String(row.id),
      organizationId: String(row.organization_id),
      intervalSeconds: Number(row.interval_seconds),
    }));
  }

  /**
   * Takes the monitor's lease for one run: only when it is not paused and no live lease holds it.
   * The UPDATE's condition is the lock, so two workers (or two processes) never both win.
   */
  async claim(id: string, token: string, leaseMs: number, now = Date.now()): Promise<MonitorRecord | undefined> {
    const moved = await this.knex('monitors')
      .where({ id, paused: false })
      .andWhere((q) => {
        q.whereNull('lease_until').orWhere('lease_until', '<', now);
      })
      // Ticks that waited (a busy organization, a schedule rebuilt) do not bunch runs: half an interval at least between two.
      .andWhere((q) => {
        q.whereNull('last_run_at').orWhereRaw('last_run_at + interval_seconds * 500 <= ?', [now]);
      })
      .update({ lease_token: token, lease_until: now + leaseMs, last_run_at: now });
    if (affected(moved) !== 1) return undefined;
    return this.get(id);
  }

  async renew(id: string, token: string, leaseMs: number, now = Date.now()): Promise<boolean> {
    return (
      affected(
        await this.knex('monitors')
          .where({ id, lease_token: token })
          .update({ lease_until: now + leaseMs }),
      ) === 1
    );
  }

  async release(id: string, token: string, nextRunAt: number | null): Promise<void> {
    await this.knex('monitors').where({ id, lease_token: token }).update({ lease_token: null, lease_until: null, next_run_at: nextRunAt });
  }

  async setGolden(id: string, runId: string | null, now = Date.now()): Promise<void> {
    await this.knex('monitors').where('id', id).update({ golden_run_id: runId, updated_at: now });
  }

  /**
   * Pauses the organization's running monitors for want of credits; answers the ones it paused (a
   * monitor paused already, by its user or by another worker, is not paused, nor told, twice).
   */
  async pauseForCredits(organizationId: string, now = Date.now()): Promise<MonitorRecord[]> {
    const candidates = await this.knex('monitors').where({ organization_id: organizationId, paused: false }).select('id');
    const paused: MonitorRecord[] = [];
    for (const { id } of candidates as Array<{ id: string }>) {
      const moved = await this.knex('monitors')
        .where({ id, paused: false })
        .update({ paused: true, paused_reason: 'credits', next_run_at: null, updated_at: now });
      const record = affected(moved) === 1 ? await this.get(id) : undefined;
      if (record) paused.push(record);
    }
    return paused;
  }

  /** Organizations that have monitors paused for credits. */
  async organizationsPausedForCredits(): Promise<string[]> {
    const rows = await this.knex('monitors').where({ paused: true, paused_reason: 'credits' }).distinct('organization_id');
    return rows.map((row: Record<string, unknown>) => String(row.organization_id));
  }

  /** Resumes the organization's monitors paused for credits; answers the ones it resumed. */
  async resumeFromCredits(organizationId: string, now = Date.now()): Promise<MonitorRecord[]> {
    const candidates = await this.knex('monitors')
      .where({ organization_id: organizationId, paused: true, paused_reason: 'credits' })
      .select('id');
    const resumed: MonitorRecord[] = [];
    for (const { id } of candidates as Array<{ id: string }>) {
      const moved = await this.knex('monitors')
        .where({ id, paused: true, paused_reason: 'credits' })
        .update({ paused: false, paused_reason: null, next_run_at: now, updated_at: now });
      const record = affected(moved) === 1 ? await this.get(id) : undefined;
      if (record) resumed.push(record);
    }
    return resumed;
  }

  /** The plan's number of monitors (plans.max_monitors), null when the plan sets none. */
  async planLimit(organizationId: string): Promise<number | null> {
    const row = await this.knex('subscriptions as s')
      .join('plans as p', 'p.id', 's.plan_id')
      .where('s.organization_id', organizationId)
      .first('p.max_monitors as max_monitors');
    return row?.max_monitors === null || row?.max_monitors === undefined ? null : Number(row.max_monitors);
  }

  /** The plan's share of the browser, as /capture gets it with the key (fair-scheduler.ts). */
  async planShare(
    organizationId: string,
  ): Promise<{ maxSharePercent: number | null; weight: number; maxConcurrentCaptures: number | null } | undefined> {
    const row = await this.knex('subscriptions as s')
      .join('plans as p', 'p.id', 's.plan_id')
      .where('s.organization_id', organizationId)
      .first('p.max_share_percent', 'p.fair_share_weight', 'p.max_concurrent_captures');
    if (!row) return undefined;
    return {
      maxSharePercent: numberOrNull(row.max_share_percent),
      weight: Number(row.fair_share_weight ?? 1),
      maxConcurrentCaptures: numberOrNull(row.max_concurrent_captures),
    };
  }
}

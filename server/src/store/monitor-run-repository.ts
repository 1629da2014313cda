import type { ChangedRegion } from '@daguerre/contract';
import type { Knex } from 'knex';
import { numberOrNull, type Database } from './database.js';

export type MonitorRunState = 'running' | 'succeeded' | 'failed';

/** What a comparison found, as a run keeps it (the diff image is a key of the result store). */
export interface StoredDiff {
  diffPercent: number;
  changed: boolean;
  threshold: number;
  changedPixels: number;
  width: number;
  height: number;
  regions: ChangedRegion[];
  textAdded: string[];
  textRemoved: string[];
}

export interface MonitorRunRecord {
  id: string;
  monitorId: string;
  organizationId: string;
  status: MonitorRunState;
  requestId: string | null;
  startedAt: number;
  finishedAt: number | null;
  credits: number;
  targetStatus: number | null;
  loadMs: number | null;
  error: { code: string; message: string } | null;
  imageKey: string | null;
  pageText: string | null;
  diff: StoredDiff | null;
  diffImageKey: string | null;
  baselineRunId: string | null;
}

/** How a run ended: the fields written when it does. */
export interface RunEnding {
  status: 'succeeded' | 'failed';
  requestId?: string | null;
  credits?: number;
  targetStatus?: number | null;
  loadMs?: number | null;
  error?: { code: string; message: string } | null;
  imageKey?: string | null;
  pageText?: string | null;
  diff?: StoredDiff | null;
  diffImageKey?: string | null;
  baselineRunId?: string | null;
}

function toRecord(row: Record<string, unknown>, withText: boolean): MonitorRunRecord {
  const rest = row.diff ? (JSON.parse(String(row.diff)) as Omit<StoredDiff, 'diffPercent' | 'changed'>) : undefined;
  return {
    id: String(row.id),
    monitorId: String(row.monitor_id),
    organizationId: String(row.organization_id),
    status: row.status as MonitorRunState,
    requestId: (row.request_id as string | null) ?? null,
    startedAt: Number(row.started_at),
    finishedAt: numberOrNull(row.finished_at),
    credits: Number(row.credits ?? 0),
    targetStatus: numberOrNull(row.target_status),
    loadMs: numberOrNull(row.load_ms),
    error: row.error_code ? { code: String(row.error_code), message: String(row.error_message ?? '') } : null,
    imageKey: (row.image_key as string | null) ?? null,
    pageText: withText ? ((row.page_text as string | null) ?? null) : null,
    diff: rest ? { ...rest, diffPercent: Number(row.diff_percent), changed: Boolean(row.diff_changed) } : null,
    diffImageKey: (row.diff_image_key as string | null) ?? null,
    baselineRunId: (row.baseline_run_id as string | null) ?? null,
  };
}

/** Every column but the page's text, which only the next comparison reads. */
const LISTED = [
  'id',
  'monitor_id',
  'organization_id',
  'status',
  'request_id',
  'started_at',
  'finished_at',
  'credits',
  'target_status',
  'load_ms',
  'error_code',
  'error_message',
  'image_key',
  'diff_percent',
  'diff_changed',
  'diff',
  'diff_image_key',
  'baseline_run_id',
];

/** The runs of monitors: one row per run, its capture's file key, its diff against the baseline. */
export class MonitorRunRepository {
  private readonly knex: Knex;

  constructor(db: Database) {
    this.knex = db.knex;
  }

  async start(run: { id: string; monitorId: string; organizationId: string; startedAt: number }): Promise<void> {
    await this.knex('monitor_runs').insert({
      id: run.id,
      monitor_id: run.monitorId,
      organization_id: run.organizationId,
      status: 'running',
      started_at: run.startedAt,
    });
  }

  async finish(runId: string, ending: RunEnding, now = Date.now()): Promise<void> {
    const { diff } = ending;
    await this.knex('monitor_runs')
      .where('id', runId)
      .update({
        status: ending.status,
        finished_at: now,
        request_id: ending.requestId ?? null,
        credits: ending.credits ?? 0,
        target_status: ending.targetStatus ?? null,
        load_ms: ending.loadMs ?? null,
        error_code: ending.error?.code ?? null,
        error_message: ending.error?.message.slice(0, 1000) ?? null,
        image_key: ending.imageKey ?? null,
        page_text: ending.pageText ?? null,
        diff_percent: diff ? diff.diffPercent : null,
        diff_changed: diff ? diff.changed : null,
        diff: diff
          ? JSON.stringify({
              threshold: diff.threshold,
              changedPixels: diff.changedPixels,
              width: diff.width,
              height: diff.height,
              regions: diff.regions,
              textAdded: diff.textAdded,
              textRemoved: diff.textRemoved,
            })
          : null,
        diff_image_key: ending.diffImageKey ?? null,
        baseline_run_id: ending.baselineRunId ?? null,
      });
  }

  async get(runId: string, withText = false): Promise<MonitorRunRecord | undefined> {
    const row = await this.knex('monitor_runs')
      .where('id', runId)
      .first(withText ? ['*'] : LISTED);
    return row ? toRecord(row as Record<string, unknown>, withText) : undefined;
  }

  /** Newest first; `before` is a cursor: runs that started before it (ties broken by id). */
  async list(monitorId: string, limit: number, before?: { startedAt: number; id: string }): Promise<MonitorRunRecord[]> {
    const query = this.knex('monitor_runs').where('monitor_id', monitorId);
    if (before) {
      query.andWhere((q) => {
        q.where('started_at', '<', before.startedAt).orWhere((same) => {
          same.where('started_at', before.startedAt).andWhere('id', '<', before.id);
        });
      });
    }
    const rows = await query.orderBy('started_at', 'desc').orderBy('id', 'desc').limit(limit).select(LISTED);
    return rows.map((row) => toRecord(row as Record<string, unknown>, false));
  }

  async latest(monitorId: string): Promise<MonitorRunRecord | undefined> {
    return (await this.list(monitorId, 1))[0];
  }

  /** The newest succeeded run: the baseline when no run is pinned. */
  async lastSucceeded(monitorId: string, withText = true): Promise<MonitorRunRecord | undefined> {
    const row = await this.knex('monitor_runs')
      .where({ monitor_id: monitorId, status: 'succeeded' })
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .first(withText ? ['*'] : LISTED);
    return row ? toRecord(row as Record<string, unknown>, withText) : undefined;
  }

  /**
   * Runs past the newest `keep` (and never the golden run nor a running one): the caller deletes
   * their files, then their rows with `remove`.
   */
  async beyond(monitorId: string, keep: number, goldenRunId: string | null): Promise<MonitorRunRecord[]> {
    const query = this.knex('monitor_runs').where('monitor_id', monitorId).whereNot('status', 'running');
    if (goldenRunId) query.whereNot('id', goldenRunId);
    const rows = await query.orderBy('started_at', 'desc').orderBy('id', 'desc').offset(keep).limit(1000).select(LISTED);
    return rows.map((row) => toRecord(row as Record<string, unknown>, false));
  }

  /**
   * Drops the page text of the monitor's runs but these: only the newest succeeded run and the
   * golden one are ever compared with, and a text may weigh up to 1 MiB.
   */
  async dropTextExcept(monitorId: string, keep: (string | null)[]): Promise<void> {
    const kept = keep.filter((id): id is string => id !== null);
    await this.knex('monitor_runs')
      .where('monitor_id', monitorId)
      .whereNotNull('page_text')
      .whereNotIn('id', kept)
      .update({ page_text: null });
  }

  async remove(runIds: string[]): Promise<void> {
    if (runIds.length > 0) await this.knex('monitor_runs').whereIn('id', runIds).delete();
  }

  /** Every file key of a monitor's runs (its deletion removes them). */
  async fileKeys(monitorId: string): Promise<string[]> {
    const rows = await this.knex('monitor_runs').where('monitor_id', monitorId).select('image_key', 'diff_image_key');
    return rows.flatMap((row: Record<string, unknown>) =>
      [row.image_key, row.diff_image_key].filter((key): key is string => typeof key === 'string'),
    );
  }

  /** Runs left `running` by a process that died: failed, uncharged (their capture released its reservation or the sweeper will). */
  async failAbandoned(monitorId: string, now = Date.now()): Promise<void> {
    await this.knex('monitor_runs').where({ monitor_id: monitorId, status: 'running' }).update({
      status: 'failed',
      finished_at: now,
      error_code: 'OPERATION_FAILED',
      error_message: 'The process running it stopped before the run ended; nothing was charged',
    });
  }
}

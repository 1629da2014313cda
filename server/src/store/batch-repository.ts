import type { Knex } from 'knex';
import { affected, type Database, numberOrNull } from './database.js';
import type { JobState, WebhookOutcome } from './job-record.js';

/** open: items still to end; completed: every item ended; cancelled: cancelled before that. */
export type BatchState = 'open' | 'completed' | 'cancelled';

export interface BatchRecord {
  id: string;
  organizationId: string;
  apiKeyId: string | null;
  state: BatchState;
  itemCount: number;
  webhookUrl: string | null;
  /** null without a webhook; pending (to be queued), queued, then delivered or gave_up. */
  webhookState: string | null;
  baseUrl: string;
  createdAt: number;
  finishedAt: number | null;
}

/** One item with its job's state; `status` null once the job's record passed its retention. */
export interface BatchItemRecord {
  index: number;
  jobId: string;
  status: JobState | null;
  errorCode: string | null;
  errorMessage: string | null;
  creditsCharged: number;
}

function toRecord(row: Record<string, unknown>): BatchRecord {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    apiKeyId: (row.api_key_id as string | null) ?? null,
    state: row.state as BatchState,
    itemCount: Number(row.item_count),
    webhookUrl: (row.webhook_url as string | null) ?? null,
    webhookState: (row.webhook_state as string | null) ?? null,
    baseUrl: row.base_url as string,
    createdAt: Number(row.created_at),
    finishedAt: numberOrNull(row.finished_at),
  };
}

/**
 * Batches of async jobs in the database (docs/bulk.md, "Where a batch lives"). The items' states
 * are the jobs' own records (job-repository.ts), read by a join; a batch's own state moves only
 * once from open to completed or cancelled (conditional writes), which is what makes its webhook a
 * single one.
 */
export class BatchRepository {
  constructor(private readonly db: Database) {}

  private get knex(): Knex {
    return this.db.knex;
  }

  async create(
    batch: { id: string; organizationId: string; apiKeyId: string | null; itemCount: number; webhookUrl?: string; baseUrl: string },
    now = Date.now(),
  ): Promise<void> {
    await this.knex('capture_batches').insert({
      id: batch.id,
      organization_id: batch.organizationId,
      api_key_id: batch.apiKeyId,
      state: 'open',
      item_count: batch.itemCount,
      webhook_url: batch.webhookUrl ?? null,
      base_url: batch.baseUrl,
      created_at: now,
    });
  }

  async addItem(batchId: string, index: number, jobId: string): Promise<void> {
    await this.knex('capture_batch_items').insert({ batch_id: batchId, item_index: index, job_id: jobId });
  }

  async remove(batchId: string): Promise<void> {
    await this.knex('capture_batch_items').where('batch_id', batchId).delete();
    await this.knex('capture_batches').where('id', batchId).delete();
  }

  async get(batchId: string): Promise<BatchRecord | undefined> {
    const row = await this.knex('capture_batches').where('id', batchId).first();
    return row ? toRecord(row) : undefined;
  }

  async items(batchId: string): Promise<BatchItemRecord[]> {
    const rows = await this.knex('capture_batch_items as i')
      .leftJoin('capture_jobs as j', 'j.id', 'i.job_id')
      .where('i.batch_id', batchId)
      .orderBy('i.item_index')
      .select('i.item_index', 'i.job_id', 'j.status', 'j.error_code', 'j.error_message', 'j.credits_charged');
    return rows.map((row: Record<string, unknown>) => ({
      index: Number(row.item_index),
      jobId: row.job_id as string,
      status: (row.status as JobState | null) ?? null,
      errorCode: (row.error_code as string | null) ?? null,
      errorMessage: (row.error_message as string | null) ?? null,
      creditsCharged: Number(row.credits_charged ?? 0),
    }));
  }

  /** The organization's latest batches, newest first (the dashboard). */
  async latest(organizationId: string, limit = 20): Promise<BatchRecord[]> {
    const rows = await this.knex('capture_batches').where('organization_id', organizationId).orderBy('created_at', 'desc').limit(limit);
    return rows.map(toRecord);
  }

  async batchOfJob(jobId: string): Promise<string | undefined> {
    const row = await this.knex('capture_batch_items').where('job_id', jobId).first('batch_id');
    return (row?.batch_id as string | undefined) ?? undefined;
  }

  /** The batch of each of these jobs that belongs to one (the dashboard's Jobs page). */
  async batchesOfJobs(jobIds: string[]): Promise<Map<string, string>> {
    if (jobIds.length === 0) return new Map();
    const rows = await this.knex('capture_batch_items').whereIn('job_id', jobIds).select('job_id', 'batch_id');
    return new Map(rows.map((row: { job_id: string; batch_id: string }) => [row.job_id, row.batch_id]));
  }

  /**
   * open → completed once every item is recorded and its job has ended (or is gone); true only for
   * the call that made the move, so the batch webhook is queued once.
   */
  async completeIfDone(batchId: string, now = Date.now()): Promise<boolean> {
    const batch = await this.get(batchId);
    if (!batch || batch.state !== 'open') return false;
    const items = await this.items(batchId);
    if (items.length < batch.itemCount || items.some((item) => item.status === 'queued' || item.status === 'active')) return false;
    return this.close(batchId, 'completed', batch.webhookUrl !== null, now);
  }

  /** open → cancelled; true only for the call that made the move. */
  async cancel(batchId: string, now = Date.now()): Promise<boolean> {
    const batch = await this.get(batchId);
    if (!batch || batch.state !== 'open') return false;
    return this.close(batchId, 'cancelled', batch.webhookUrl !== null, now);
  }

  private async close(batchId: string, state: BatchState, hasWebhook: boolean, now: number): Promise<boolean> {
    const moved = await this.knex('capture_batches')
      .where({ id: batchId, state: 'open' })
      .update({ state, finished_at: now, webhook_state: hasWebhook ? 'pending' : null });
    return affected(moved) === 1;
  }

  async open(limit = 200): Promise<BatchRecord[]> {
    const rows = await this.knex('capture_batches').where('state', 'open').orderBy('created_at').limit(limit);
    return rows.map(toRecord);
  }

  async webhooksPending(limit = 200): Promise<BatchRecord[]> {
    const rows = await this.knex('capture_batches').where('webhook_state', 'pending').limit(limit);
    return rows.map(toRecord);
  }

  async markWebhookQueued(batchId: string): Promise<void> {
    await this.knex('capture_batches').where({ id: batchId, webhook_state: 'pending' }).update({ webhook_state: 'queued' });
  }

  /** Delivered or given up: either way it is not queued again after a Redis loss. */
  async markWebhookEnded(batchId: string, outcome: WebhookOutcome): Promise<void> {
    await this.knex('capture_batches')
      .where('id', batchId)
      .whereIn('webhook_state', ['pending', 'queued'])
      .update({ webhook_state: outcome });
  }

  /**
   * After Redis lost its data: batch webhooks queued but neither delivered nor given up are pending
   * again, and the periodic check queues them under the same webhook-id (delivery is at least once).
   */
  async requeueUndeliveredWebhooks(): Promise<number> {
    return affected(await this.knex('capture_batches').where('webhook_state', 'queued').update({ webhook_state: 'pending' }));
  }

  /** Finished batches older than the retention of their jobs' records: deleted with their items. */
  async removeFinishedBefore(cutoff: number, limit = 200): Promise<number> {
    const rows = await this.knex('capture_batches')
      .whereNot('state', 'open')
      .andWhere('finished_at', '<', cutoff)
      .limit(limit)
      .select('id');
    for (const row of rows) await this.remove(row.id as string);
    return rows.length;
  }
}

import type { Knex } from 'knex';
import { numberOrNull, type Database } from './database.js';

/** One event a webhook carries: fixed once, so every attempt and every resend sends the same bytes. */
export interface WebhookEventRecord {
  /** The message id: the webhook-id header of every attempt. */
  id: string;
  organizationId: string;
  jobId: string | null;
  batchId: string | null;
  eventType: string;
  url: string;
  apiKeyId: string | null;
  body: Buffer;
  createdAt: number;
}

/** One try to deliver an event. */
export interface WebhookAttemptRecord {
  eventId: string;
  /** The BullMQ job that made it: the event id for the first delivery, a resend's own id otherwise. */
  deliveryId: string;
  /** 1-based, within its delivery. */
  attempt: number;
  attemptedAt: number;
  /** null when the receiver did not answer (refused, timed out). */
  responseStatus: number | null;
  /** A short reason with no secret in it; null for a success. */
  error: string | null;
  durationMs: number;
  /** When the next attempt of the same delivery is due; null when none is left. */
  nextRetryAt: number | null;
}

/** Whose events: one job's or one batch's. */
export type WebhookSubject = { jobId: string } | { batchId: string };

function toEvent(row: Record<string, unknown>): WebhookEventRecord {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    jobId: (row.job_id as string | null) ?? null,
    batchId: (row.batch_id as string | null) ?? null,
    eventType: row.event_type as string,
    url: row.url as string,
    apiKeyId: (row.api_key_id as string | null) ?? null,
    // better-sqlite3 and mysql2 both answer a BLOB with a Buffer.
    body: Buffer.from(row.body as Buffer),
    createdAt: Number(row.created_at),
  };
}

function toAttempt(row: Record<string, unknown>): WebhookAttemptRecord {
  return {
    eventId: row.event_id as string,
    deliveryId: row.delivery_id as string,
    attempt: Number(row.attempt),
    attemptedAt: Number(row.attempted_at),
    responseStatus: numberOrNull(row.response_status),
    error: (row.error as string | null) ?? null,
    durationMs: Number(row.duration_ms),
    nextRetryAt: numberOrNull(row.next_retry_at),
  };
}

/**
 * Webhook events and their attempts (docs/async-and-webhooks.md). An event is written when it is
 * queued and again (a no-op) by the worker before its first attempt, so one queued before this
 * table existed, or whose first write failed, is still on record; both writes ignore an event
 * already there.
 */
export class WebhookEventRepository {
  constructor(private readonly db: Database) {}

  private get knex(): Knex {
    return this.db.knex;
  }

  /** Records the event unless it is on record already (queued again after a Redis loss: the same id). */
  async record(event: Omit<WebhookEventRecord, 'createdAt'>, now = Date.now()): Promise<void> {
    await this.knex('webhook_events')
      .insert({
        id: event.id,
        organization_id: event.organizationId,
        job_id: event.jobId,
        batch_id: event.batchId,
        event_type: event.eventType.slice(0, 40),
        url: event.url,
        api_key_id: event.apiKeyId,
        body: event.body,
        created_at: now,
      })
      .onConflict('id')
      .ignore();
  }

  async addAttempt(attempt: WebhookAttemptRecord): Promise<void> {
    await this.knex('webhook_attempts').insert({
      event_id: attempt.eventId,
      delivery_id: attempt.deliveryId.slice(0, 120),
      attempt: attempt.attempt,
      attempted_at: attempt.attemptedAt,
      response_status: attempt.responseStatus,
      error: attempt.error?.slice(0, 300) ?? null,
      duration_ms: Math.max(0, Math.round(attempt.durationMs)),
      next_retry_at: attempt.nextRetryAt,
    });
  }

  async get(eventId: string): Promise<WebhookEventRecord | undefined> {
    const row = await this.knex('webhook_events').where('id', eventId).first();
    return row ? toEvent(row) : undefined;
  }

  /** The organization's events of one job or batch, oldest first. */
  async eventsOf(organizationId: string, subject: WebhookSubject): Promise<WebhookEventRecord[]> {
    const column = 'jobId' in subject ? { job_id: subject.jobId } : { batch_id: subject.batchId };
    const rows = await this.knex('webhook_events')
      .where({ organization_id: organizationId, ...column })
      .orderBy('created_at')
      .orderBy('id');
    return rows.map(toEvent);
  }

  /** The attempts of these events, oldest first. */
  async attemptsOf(eventIds: string[]): Promise<WebhookAttemptRecord[]> {
    if (eventIds.length === 0) return [];
    const rows = await this.knex('webhook_attempts').whereIn('event_id', eventIds).orderBy('attempted_at').orderBy('id');
    return rows.map(toAttempt);
  }

  /** Events (with their attempts) queued before `cutoff`: they go with the jobs and batches they report. */
  async removeCreatedBefore(cutoff: number, limit = 500): Promise<number> {
    const ids = (await this.knex('webhook_events').where('created_at', '<', cutoff).limit(limit).select('id')).map(
      (row: { id: string }) => row.id,
    );
    if (ids.length === 0) return 0;
    // Explicitly, not only by the foreign key's cascade: one delete path on both databases.
    await this.knex('webhook_attempts').whereIn('event_id', ids).delete();
    await this.knex('webhook_events').whereIn('id', ids).delete();
    return ids.length;
  }
}

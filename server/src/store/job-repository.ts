import type { Knex } from 'knex';
import type { CreditRepository } from './credit-repository.js';
import { affected, type Database } from './database.js';
import { fairQueuePriority } from './fair-queue-priority.js';
import { type JobRecord, type JobResult, type JobState, type NewJob, toJobRecord, type WebhookOutcome } from './job-record.js';

export type ClaimOutcome =
  | { kind: 'claimed'; attempt: number; staleReservations: string[]; firstLedgerRow: boolean }
  | { kind: 'finished'; job: JobRecord }
  | { kind: 'busy'; until: number }
  | { kind: 'exhausted' }
  | { kind: 'missing' };

const TERMINAL: JobState[] = ['succeeded', 'failed'];

/**
 * Async capture jobs in the database. Status moves queued → active → succeeded | failed, and only
 * once into a final state: every final write is conditional on the job not being final yet. A
 * success and its charge are one transaction (the `job_charges` row keyed by job id, the ledger row
 * moved from reserved to charged, the job marked succeeded with its file's location), so a job is
 * charged at most once and only when its file can be fetched, whichever process dies when.
 */
export class JobRepository {
  constructor(
    private readonly db: Database,
    private readonly credits: CreditRepository,
  ) {}

  private get knex(): Knex {
    return this.db.knex;
  }

  /**
   * Records a new job with its place in the fair queue, start-time fair queuing on BullMQ's
   * priorities: a job's number is one more than its organization's last queued job, and never below
   * the lowest number still queued (the queue's "now"). An organization with nothing queued starts
   * just before that "now", so its job runs next, ahead of another organization's backlog; two
   * backlogs interleave (after 1 000 newcomers during one backlog, newcomers tie and run in arrival order). Priorities only grow while the queue never empties; past BullMQ's limit the
   * order falls back to arrival order.
   */
  async create(job: NewJob, now = Date.now()): Promise<number> {
    const priority = await fairQueuePriority(this.knex, job.organizationId, job.weight);
    await this.knex('capture_jobs').insert({
      id: job.id,
      organization_id: job.organizationId,
      api_key_id: job.apiKeyId,
      status: 'queued',
      priority,
      payload: job.payload,
      has_secrets: job.hasSecrets,
      webhook_url: job.webhookUrl ?? null,
      base_url: job.baseUrl,
      created_at: now,
    });
    return priority;
  }

  async markEnqueued(jobId: string): Promise<void> {
    await this.knex('capture_jobs').where('id', jobId).update({ enqueued: true });
  }

  async remove(jobId: string): Promise<void> {
    await this.knex('capture_jobs').where('id', jobId).delete();
  }

  async get(jobId: string): Promise<JobRecord | undefined> {
    const row = await this.knex('capture_jobs').where('id', jobId).first();
    return row ? toJobRecord(row) : undefined;
  }

  /**
   * An attempt takes the job: a final job is not run again; a job another live attempt holds (its
   * lease not yet ended) is left to it; a job whose attempts ran out fails, charging nothing.
   * Reservations of earlier attempts (workers that died) are returned for release.
   */
  async claim(jobId: string, token: string, leaseMs: number, maxAttempts: number, now = Date.now()): Promise<ClaimOutcome> {
    const job = await this.get(jobId);
    if (!job) return { kind: 'missing' };
    if (TERMINAL.includes(job.status)) return { kind: 'finished', job };
    if (job.status === 'active' && job.leaseUntil !== null && job.leaseUntil > now) return { kind: 'busy', until: job.leaseUntil };
    if (job.attempts >= maxAttempts) {
      await this.fail(jobId, {
        code: 'OPERATION_FAILED',
        message: `The capture was attempted ${job.attempts} times and its worker stopped each time (killed or lost); nothing was charged`,
      });
      return { kind: 'exhausted' };
    }
    const moved = await this.knex('capture_jobs')
      .where({ id: jobId, attempts: job.attempts })
      .whereIn('status', ['queued', 'active'])
      .update({
        status: 'active',
        attempts: job.attempts + 1,
        lease_token: token,
        lease_until: now + leaseMs,
        started_at: job.startedAt ?? now,
      });
    if (affected(moved) !== 1) return { kind: 'busy', until: now + 1_000 };
    const rows = await this.knex('capture_ledger').where('job_id', jobId).count({ n: '*' }).first();
    return {
      kind: 'claimed',
      attempt: job.attempts + 1,
      staleReservations: await this.credits.reservationsOfJob(jobId),
      firstLedgerRow: Number(rows?.n ?? 0) === 0,
    };
  }

  /** Extends the attempt's lease; false when the job is no longer this attempt's (taken over, or final). */
  async renew(jobId: string, token: string, leaseMs: number, now = Date.now()): Promise<boolean> {
    const moved = await this.knex('capture_jobs')
      .where({ id: jobId, lease_token: token, status: 'active' })
      .update({ lease_until: now + leaseMs });
    return affected(moved) === 1;
  }

  /** A graceful stop gives the job back without counting the attempt; false when it is no longer this attempt's. */
  async handBack(jobId: string, token: string): Promise<boolean> {
    const moved = await this.knex('capture_jobs')
      .where({ id: jobId, lease_token: token, status: 'active' })
      .update({ status: 'queued', lease_token: null, lease_until: null, attempts: this.knex.raw('attempts - 1') });
    return affected(moved) === 1;
  }

  /**
   * The job succeeded: its charge row, the ledger's charge and the job's final state with its file's
   * location in one transaction. `requestId` null: nothing to charge (a cache hit). False, and
   * nothing written, when the job had already ended (another attempt won) or the reservation was
   * already settled (released as stale): the caller then releases its reservation and drops its file.
   */
  async succeed(
    jobId: string,
    requestId: string | null,
    credits: number,
    result: JobResult,
    expiresAt: number,
    now = Date.now(),
  ): Promise<boolean> {
    class Lost extends Error {}
    try {
      await this.knex.transaction(async (trx) => {
        const job = await trx('capture_jobs').where('id', jobId).first('organization_id', 'webhook_url');
        if (!job) throw new Lost();
        if (requestId) {
          // The primary key on job_id is the last guard: a second charge of one job cannot be written.
          await trx('job_charges').insert({
            job_id: jobId,
            request_id: requestId,
            organization_id: job.organization_id,
            credits,
            charged_at: now,
          });
        }
        const moved = await trx('capture_jobs')
          .where('id', jobId)
          .whereIn('status', ['queued', 'active'])
          .update({
            status: 'succeeded',
            result: JSON.stringify(result),
            credits_charged: requestId ? credits : 0,
            finished_at: now,
            expires_at: expiresAt,
            lease_token: null,
            lease_until: null,
            webhook_state: job.webhook_url ? 'pending' : null,
          });
        if (affected(moved) !== 1) throw new Lost();
        if (
          requestId &&
          !(await this.credits.settleWithin(trx, requestId, 'charged', {
            processing_ms: result.processingTime,
            file_size: result.fileSize,
          }))
        )
          throw new Lost();
      });
      return true;
    } catch (error) {
      if (error instanceof Lost) return false;
      // A duplicate job_charges key: the job was charged by another attempt already.
      if (/duplicate|unique|constraint/i.test(String((error as Error).message))) return false;
      throw error;
    }
  }

  /** The job failed: final, charged nothing; reservations its attempts still hold are released with it. */
  async fail(jobId: string, error: { code: string; message: string }, expiresAt?: number, now = Date.now()): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const job = await trx('capture_jobs').where('id', jobId).first('webhook_url');
      if (!job) return false;
      const moved = await trx('capture_jobs')
        .where('id', jobId)
        .whereIn('status', ['queued', 'active'])
        .update({
          status: 'failed',
          error_code: error.code.slice(0, 40),
          error_message: error.message,
          credits_charged: 0,
          finished_at: now,
          expires_at: expiresAt ?? null,
          lease_token: null,
          lease_until: null,
          webhook_state: job.webhook_url ? 'pending' : null,
        });
      if (affected(moved) !== 1) return false;
      const held = await trx('capture_ledger').where({ job_id: jobId, status: 'reserved' }).select('request_id');
      for (const row of held)
        await this.credits.settleWithin(trx, row.request_id as string, 'released', { error_code: error.code.slice(0, 40) });
      return true;
    });
  }

  /** The organization's latest jobs, newest first (the dashboard's Jobs page). */
  async latest(organizationId: string, limit = 50): Promise<JobRecord[]> {
    const rows = await this.knex('capture_jobs')
      .where('organization_id', organizationId)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(limit);
    return rows.map(toJobRecord);
  }

  /** Jobs the queue may have lost: queued longer than `queuedForMs`, or active with an ended lease. */
  async unattended(queuedForMs: number, limit = 200, now = Date.now()): Promise<JobRecord[]> {
    const rows = await this.knex('capture_jobs')
      .where((q) => {
        q.where('status', 'queued').andWhere('created_at', '<', now - queuedForMs);
      })
      .orWhere((q) => {
        q.where('status', 'active').andWhere('lease_until', '<', now);
      })
      .orderBy('priority')
      .limit(limit);
    return rows.map(toJobRecord);
  }

  /** Final jobs whose webhook is not queued yet (Redis was down when they ended). */
  async webhooksPending(limit = 200): Promise<JobRecord[]> {
    const rows = await this.knex('capture_jobs').where('webhook_state', 'pending').limit(limit);
    return rows.map(toJobRecord);
  }

  async markWebhookQueued(jobId: string): Promise<void> {
    await this.knex('capture_jobs').where({ id: jobId, webhook_state: 'pending' }).update({ webhook_state: 'queued' });
  }

  /** Delivered, or given up after its last attempt: either way it is not queued again after a Redis loss. */
  async markWebhookEnded(jobId: string, outcome: WebhookOutcome): Promise<void> {
    await this.knex('capture_jobs').where('id', jobId).whereIn('webhook_state', ['pending', 'queued']).update({ webhook_state: outcome });
  }

  /**
   * After Redis lost its data: webhooks queued but not yet delivered are to be queued again. A
   * receiver may then get one twice, under the same webhook-id (Standard Webhooks receivers dedupe on it).
   */
  async requeueUndeliveredWebhooks(): Promise<number> {
    return affected(await this.knex('capture_jobs').where('webhook_state', 'queued').update({ webhook_state: 'pending' }));
  }

  /** Final jobs past their retention: returned (for their files) and deleted. */
  async takeExpired(limit = 200, now = Date.now()): Promise<JobRecord[]> {
    const rows = await this.knex('capture_jobs').whereNotNull('expires_at').andWhere('expires_at', '<', now).limit(limit);
    if (rows.length > 0)
      await this.knex('capture_jobs')
        .whereIn(
          'id',
          rows.map((row) => row.id as string),
        )
        .delete();
    return rows.map(toJobRecord);
  }

  /** Jobs waiting for a worker and jobs being rendered, across the deployment (the scaling signal). */
  async counts(): Promise<{ queued: number; active: number }> {
    const rows = (await this.knex('capture_jobs')
      .whereIn('status', ['queued', 'active'])
      .groupBy('status')
      .select('status')
      .count({ n: '*' })) as Array<{ status: string; n: number | string }>;
    const of = (status: string) => Number(rows.find((row) => row.status === status)?.n ?? 0);
    return { queued: of('queued'), active: of('active') };
  }
}

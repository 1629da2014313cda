import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { BatchRepository } from '../store/batch-repository.js';
import type { JobRecord } from '../store/job-record.js';
import type { JobRepository } from '../store/job-repository.js';
import type { WebhookEventRepository } from '../store/webhook-event-repository.js';
import { addToQueue } from './capture-jobs.js';
import type { JobAnnouncer } from './job-announcer.js';
import type { CaptureJobPayload } from './job-types.js';
import { LocalResultFiles, type ResultFiles } from './result-files.js';
import { ignoreBecause } from '../ignore-error.js';

export interface JobUpkeepOptions {
  prefix: string;
  /** How often the queue is checked against the records (JOB_LOCK_MS: a lease ends within it). */
  reconcileIntervalMs: number;
  /** How often expired results are swept (RESULT_SWEEP_INTERVAL_MS). */
  sweepIntervalMs: number;
  resultTtlSeconds: number;
}

/**
 * Keeps the queue true to the database, on every process that has the queue (each runs it; every
 * step is idempotent):
 * - a job whose queue entry is gone (Redis restarted empty, or its worker died with Redis down) is
 *   queued again from its record (a record whose POST never answered 202 is deleted instead), unless it carried secrets, which are never kept outside Redis: it
 *   then fails, charging nothing, and says to send it again;
 * - webhooks of ended jobs that could not be queued are queued; after Redis lost its data, job and
 *   batch webhooks neither delivered nor given up are queued again (batches' by their periodic check);
 * - files and records of jobs past their retention are deleted, as are files no record points to.
 */
export class JobUpkeep {
  private timers: NodeJS.Timeout[] = [];
  private reconciling: Promise<void> | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      repository: JobRepository;
      batches?: BatchRepository;
      /** Webhook events on record (docs/async-and-webhooks.md), kept as long as the jobs and batches they report. */
      webhookEvents?: WebhookEventRepository;
      queue: Queue<CaptureJobPayload>;
      commands: Redis;
      files: ResultFiles;
      announcer?: JobAnnouncer;
      logger: Logger;
    },
    private readonly options: JobUpkeepOptions,
  ) {}

  start(): void {
    const every = (ms: number, run: () => Promise<void>) => {
      const timer = setInterval(() => void run(), ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.options.reconcileIntervalMs, () => this.reconcile());
    every(this.options.sweepIntervalMs, () => this.sweep());
  }

  /** A marker key in Redis: when it is gone, Redis lost its data and every unfinished job is checked. */
  private get marker(): string {
    return `${this.options.prefix}:daguerre:queue-epoch`;
  }

  reconcile(): Promise<void> {
    this.reconciling ??= this.reconcileOnce()
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error }, 'job upkeep: reconciling the queue failed; retrying at the next interval'),
      )
      .finally(() => (this.reconciling = undefined));
    return this.reconciling;
  }

  private async reconcileOnce(): Promise<void> {
    const { repository, batches, commands, logger } = this.deps;
    // The marker is written back only once what a wipe asks for is done: a round cut short (the
    // database down) leaves it missing, so the next round sees the wipe again (every step is idempotent).
    const wiped = (await commands.exists(this.marker)) === 0;
    // Webhooks that were in the lost queue are queued again (at least once, under the same webhook-id).
    if (wiped) await repository.requeueUndeliveredWebhooks();
    if (wiped) await batches?.requeueUndeliveredWebhooks();
    // After a wipe every unfinished job; otherwise those whose worker's lease ended (and old queued ones, rarely lost).
    const candidates = await repository.unattended(wiped ? 0 : this.options.reconcileIntervalMs * 4);
    let requeued = 0;
    for (const job of candidates) if (await this.requeue(job)) requeued += 1;
    if (wiped) await commands.set(this.marker, String(Date.now()));
    if (requeued > 0) logger.warn({ requeued, wiped }, 'job upkeep: queued again jobs the queue had lost');
    if (this.deps.announcer) for (const job of await repository.webhooksPending()) await this.deps.announcer.announceRecord(job);
  }

  /** Queues the job again when its entry is gone; true when it did. */
  private async requeue(job: JobRecord): Promise<boolean> {
    const { queue, repository } = this.deps;
    if (job.status === 'queued' && !job.enqueued) {
      // Its POST died before answering 202 (an API instance killed): nobody knows its id, so it is
      // not run (it would charge for a file nobody can fetch). Left alone while the POST may still be under way.
      if (Date.now() - job.createdAt > this.options.reconcileIntervalMs * 4) await repository.remove(job.id);
      return false;
    }
    const existing = await queue.getJob(job.id);
    if (existing) {
      const state = await existing.getState();
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return false;
      await existing.remove().catch(ignoreBecause('the record stays unfinished: the next upkeep tries again'));
    }
    if (job.hasSecrets) {
      await repository.fail(
        job.id,
        {
          code: 'SERVICE_UNAVAILABLE',
          message:
            'The job queue lost this job (Redis restarted) and its secret options (headers, proxy or provider credentials) are kept nowhere else; nothing was charged. Send the job again',
        },
        Date.now() + this.options.resultTtlSeconds * 1000,
      );
      await this.deps.announcer?.announce(job.id);
      return false;
    }
    await addToQueue(queue, job.id, JSON.parse(job.payload) as CaptureJobPayload, job.priority);
    return true;
  }

  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce()
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error }, 'job upkeep: sweeping expired results failed; retrying at the next interval'),
      )
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const { repository, files } = this.deps;
    let removed = 0;
    for (;;) {
      const expired = await repository.takeExpired();
      for (const job of expired) {
        if (job.result?.file.where === 'results') await files.remove(job.result.file.key);
        removed += 1;
      }
      if (expired.length === 0) break;
    }
    // Files of attempts that stored a file and then lost (or died before) their commit.
    if (files instanceof LocalResultFiles) {
      for (const key of await files.oldFiles(this.options.resultTtlSeconds * 1000)) {
        const job = await repository.get(key.split('/')[0]!);
        if (job?.result?.file.where === 'results' && job.result.file.key === key) continue;
        await files.remove(key);
      }
    }
    if (removed > 0) this.deps.logger.info({ removed }, 'job upkeep: removed jobs past their retention');
    // Webhook events go with the jobs and batches they report: both are kept that long after they end.
    const events = this.deps.webhookEvents;
    if (events) {
      const cutoff = Date.now() - this.options.resultTtlSeconds * 1000;
      let swept: number;
      do swept = await events.removeCreatedBefore(cutoff);
      while (swept > 0);
    }
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await Promise.all([this.reconciling, this.sweeping]);
  }
}

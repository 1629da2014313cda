import { randomUUID } from 'node:crypto';
import { CANCELLED_CODE, type BatchData, type BatchItem, type BatchWebhookEvent } from '@daguerre/contract';
import type { Logger } from 'pino';
import { ApiError, errors } from '../errors.js';
import type { BatchQueue, NewBatch } from '../services/queued-capture.js';
import type { BatchItemRecord, BatchRecord, BatchRepository } from '../store/batch-repository.js';
import { filePath, statusPath, type CaptureJobs } from './capture-jobs.js';
import type { JobAnnouncer } from './job-announcer.js';
import type { JobWithdrawal } from './job-cancel.js';
import type { WebhookQueue } from './webhook-delivery.js';

export const batchPath = (batchId: string) => `/captures/bulk/${batchId}`;

/** A batch accepted by the submission service (services/capture-submission.ts). */
export type { NewBatch };

const iso = (ms: number | null) => (ms ? new Date(ms).toISOString() : undefined);

function itemView(batch: BatchRecord, item: BatchItemRecord): BatchItem {
  const cancelled = item.status === 'failed' && item.errorCode === CANCELLED_CODE;
  const status = item.status === null ? 'expired' : cancelled ? 'cancelled' : item.status;
  return {
    index: item.index,
    jobId: item.jobId,
    status,
    statusUrl: `${batch.baseUrl}${statusPath(item.jobId)}`,
    ...(status === 'succeeded' ? { fileUrl: `${batch.baseUrl}${filePath(item.jobId)}` } : {}),
    ...(item.status === 'failed' ? { error: { code: item.errorCode ?? 'OPERATION_FAILED', message: item.errorMessage ?? '' } } : {}),
  };
}

/** `GET /captures/bulk/{batchId}`'s data (and the batch webhook's). */
export function batchView(batch: BatchRecord, records: BatchItemRecord[]): BatchData {
  const items = records.map((record) => itemView(batch, record));
  const count = (status: BatchItem['status']) => items.filter((item) => item.status === status).length;
  const counts = {
    succeeded: count('succeeded'),
    failed: count('failed'),
    queued: count('queued'),
    running: count('active'),
    cancelled: count('cancelled'),
  };
  const status = batch.state !== 'open' ? batch.state : counts.queued === batch.itemCount ? 'queued' : 'running';
  const finishedAt = iso(batch.finishedAt);
  return {
    batchId: batch.id,
    status,
    createdAt: iso(batch.createdAt)!,
    ...(finishedAt ? { finishedAt } : {}),
    total: batch.itemCount,
    counts,
    creditsCharged: records.reduce((sum, record) => sum + record.creditsCharged, 0),
    statusUrl: `${batch.baseUrl}${batchPath(batch.id)}`,
    items,
  };
}

/**
 * Bulk captures (docs/bulk.md): a layer over the async jobs, not a second queue. Each item is queued
 * with CaptureJobs.enqueue (its own record, fair priority, charge and optional webhook); the batch
 * is a database record over those jobs. When the last item ends (the worker's end-of-job hook, or
 * the periodic check for anything that hook missed) the batch completes once and its webhook is queued.
 */
export class CaptureBatches implements BatchQueue {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      jobs: CaptureJobs;
      batches: BatchRepository;
      webhooks: WebhookQueue;
      announcer: JobAnnouncer;
      withdrawal: JobWithdrawal;
      logger: Logger;
    },
    private readonly options: { checkIntervalMs: number; resultTtlSeconds: number },
  ) {}

  private async db<T>(work: Promise<T>): Promise<T> {
    return work.catch((error: unknown) => {
      throw errors.storeUnavailable('database', error);
    });
  }

  /** Records the batch, then queues its items in order; a failure part-way cancels what was queued. */
  async create(batch: NewBatch): Promise<BatchData> {
    const { jobs, batches, logger } = this.deps;
    const batchId = randomUUID();
    await this.db(
      batches.create({
        id: batchId,
        organizationId: batch.organizationId,
        apiKeyId: batch.keyId,
        itemCount: batch.items.length,
        baseUrl: batch.baseUrl,
        ...(batch.webhookUrl !== undefined ? { webhookUrl: batch.webhookUrl } : {}),
      }),
    );
    const queued: string[] = [];
    try {
      for (const [index, item] of batch.items.entries()) {
        const { webhookUrl, ...options } = item;
        const jobId = await jobs.enqueue({
          organizationId: batch.organizationId,
          keyId: batch.keyId,
          options,
          baseUrl: batch.baseUrl,
          kind: 'batch',
          ...(batch.fairShare ? { fairShare: batch.fairShare } : {}),
          ...(batch.providerKeyHeader ? { providerKeyHeader: batch.providerKeyHeader } : {}),
          ...(webhookUrl !== undefined ? { webhookUrl } : {}),
        });
        queued.push(jobId);
        await this.db(batches.addItem(batchId, index, jobId));
      }
    } catch (error) {
      logger.warn({ batchId, queued: queued.length, err: error }, 'queuing a batch failed part-way: its queued items are withdrawn');
      // Nothing half-written: the items queued so far are ended and their records dropped (the caller got an error, not their ids).
      for (const jobId of queued) {
        await this.withdraw(jobId, 'the batch could not be queued whole', { forget: true }).catch((withdrawError: unknown) =>
          logger.warn({ batchId, jobId, err: withdrawError }, 'could not withdraw an item of a batch that could not be queued whole'),
        );
      }
      await batches
        .remove(batchId)
        .catch((removeError: unknown) =>
          logger.warn({ batchId, err: removeError }, 'could not remove a batch that could not be queued whole'),
        );
      throw error;
    }
    // Items that ended while later ones were still being queued.
    await this.check(batchId);
    return this.view(batchId, batch.organizationId);
  }

  private async own(batchId: string, organizationId: string): Promise<BatchRecord> {
    const batch = /^[0-9a-f-]{36}$/i.test(batchId) ? await this.db(this.deps.batches.get(batchId)) : undefined;
    if (!batch || batch.organizationId !== organizationId) throw new ApiError('NOT_FOUND', `No batch ${batchId} for this organization`);
    return batch;
  }

  async view(batchId: string, organizationId: string): Promise<BatchData> {
    const batch = await this.own(batchId, organizationId);
    return batchView(batch, await this.db(this.deps.batches.items(batchId)));
  }

  /** Cancels the items that have not ended (never charged; finished ones keep their files). A finished batch is answered as it is. */
  async cancel(batchId: string, organizationId: string): Promise<BatchData> {
    const { batches } = this.deps;
    const batch = await this.own(batchId, organizationId);
    // The batch is cancelled first, so that the items' ends below can no longer complete it.
    // A cancelled batch withdraws its live items again: a cancel cut short (a database outage) is
    // finished by the retried DELETE, and withdrawing is idempotent.
    const cancelledNow = batch.state === 'open' && (await this.db(batches.cancel(batchId)));
    if (cancelledNow || batch.state === 'cancelled') {
      const items = await this.db(batches.items(batchId));
      for (const item of items) {
        if (item.status === 'queued' || item.status === 'active') await this.withdraw(item.jobId, 'its batch was cancelled');
      }
      if (cancelledNow) await this.announce(batchId);
    }
    return this.view(batchId, organizationId);
  }

  /** Ends a job that has not ended as cancelled (job-cancel.ts), shared with DELETE /captures/{jobId}. */
  private withdraw(jobId: string, why: string, options: { forget?: boolean } = {}): Promise<void> {
    return this.deps.withdrawal.withdraw(jobId, why, options);
  }

  /** The end-of-job hook: completes the job's batch when it was the last item. */
  async jobEnded(jobId: string): Promise<void> {
    try {
      const batchId = await this.deps.batches.batchOfJob(jobId);
      if (batchId) await this.check(batchId);
    } catch (error) {
      this.deps.logger.warn({ jobId, err: error }, 'could not check the batch of an ended job; the periodic check will');
    }
  }

  private async check(batchId: string): Promise<void> {
    if (await this.deps.batches.completeIfDone(batchId)) await this.announce(batchId);
  }

  /** Queues the batch webhook once (the message id makes a repeat a no-op). */
  private async announce(batchId: string): Promise<void> {
    const { batches, webhooks, logger } = this.deps;
    try {
      const batch = await batches.get(batchId);
      if (!batch || batch.webhookState !== 'pending' || !batch.webhookUrl || batch.state === 'open') return;
      const event: BatchWebhookEvent = {
        type: batch.state === 'completed' ? 'batch.completed' : 'batch.cancelled',
        data: batchView(batch, await batches.items(batchId)),
      };
      await webhooks.enqueue({
        url: batch.webhookUrl,
        keyId: batch.apiKeyId ?? '',
        organizationId: batch.organizationId,
        messageId: `msg_batch_${batchId}`,
        body: JSON.stringify(event),
      });
      await batches.markWebhookQueued(batchId);
    } catch (error) {
      logger.warn({ batchId, err: error }, 'could not queue the webhook of a batch; the periodic check retries');
    }
  }

  /** What the end-of-job hook may have missed (a process that died, Redis down), and retention. */
  async sweep(): Promise<void> {
    const { batches } = this.deps;
    for (const batch of await batches.open()) await this.check(batch.id);
    for (const batch of await batches.webhooksPending()) await this.announce(batch.id);
    await batches.removeFinishedBefore(Date.now() - this.options.resultTtlSeconds * 1000);
  }

  start(): void {
    this.timer = setInterval(() => {
      this.sweep().catch((error: unknown) => this.deps.logger.warn({ err: error }, 'batch check failed'));
    }, this.options.checkIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

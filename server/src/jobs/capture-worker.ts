import { randomUUID } from 'node:crypto';
import type { CaptureWebhookEvent } from '@rendershot/contract';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ApiError } from '../errors.js';
import type { CaptureService } from '../services/capture-service.js';
import type { CreditRepository } from '../store/credit-repository.js';
import { filePath } from './capture-jobs.js';
import { CAPTURE_QUEUE, SECRET_OPTION_FIELDS, type CaptureJobOutcome, type CaptureJobPayload, type StoredFile } from './job-types.js';
import { jobView } from './job-view.js';
import type { ResultStore } from './result-store.js';
import type { WebhookQueue } from './webhook-delivery.js';

export interface CaptureWorkerOptions {
  prefix: string;
  concurrency: number;
  lockMs: number;
}

export interface CaptureWorkerDependencies {
  captures: CaptureService;
  credits: CreditRepository;
  results: ResultStore;
  webhooks: WebhookQueue;
  logger: Logger;
}

type CaptureJob = Job<CaptureJobPayload, CaptureJobOutcome>;

/**
 * Renders queued captures with the same CaptureService as `/capture` (credits, cache, storage, AI):
 * charged when the job succeeds, never when it fails. A worker that dies mid-job stops renewing
 * its lock; BullMQ's stalled-job check then gives the job to another worker, whose attempt first
 * releases the credits the dead one had reserved, so the job is charged once.
 */
export class CaptureWorker {
  private readonly worker: Worker<CaptureJobPayload, CaptureJobOutcome>;
  private readonly running = new Set<AbortController>();

  constructor(
    connection: Redis,
    private readonly deps: CaptureWorkerDependencies,
    options: CaptureWorkerOptions,
  ) {
    this.worker = new Worker<CaptureJobPayload, CaptureJobOutcome>(CAPTURE_QUEUE, (job) => this.process(job), {
      connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockMs,
      stalledInterval: Math.max(1_000, Math.round(options.lockMs / 2)),
      // A job whose workers keep dying (a page that kills the process) fails after two take-overs.
      maxStalledCount: 2,
    });
    this.worker.on('completed', (job) => void this.ended(job, 'capture.succeeded'));
    this.worker.on('failed', (job) => {
      if (job) void this.ended(job, 'capture.failed');
    });
    this.worker.on('error', (error) => deps.logger.error({ err: error }, 'capture worker error'));
  }

  private async process(job: CaptureJob): Promise<CaptureJobOutcome> {
    const data = job.data;
    const { credits, captures, results, logger } = this.deps;
    // Reservations of earlier attempts belong to workers that died: give them back first.
    for (const requestId of data.attemptRequestIds) await credits.release(requestId, 'JOB_TAKEN_OVER');
    const requestId = data.attemptRequestIds.length === 0 ? job.id! : randomUUID();
    await job.updateData({ ...data, attemptRequestIds: [...data.attemptRequestIds, requestId] });

    const controller = new AbortController();
    this.running.add(controller);
    try {
      const file = await captures.capture({
        requestId,
        key: { keyId: data.keyId, organizationId: data.organizationId, userId: null, membershipActive: true, ...(data.fairShare ? { fairShare: data.fairShare } : {}) },
        options: data.options,
        ...(data.providerKeyHeader ? { providerKeyHeader: data.providerKeyHeader } : {}),
        signal: controller.signal,
        mode: 'async',
      });
      let stored: StoredFile;
      if (file.storedIn) {
        stored = { where: 'organization-storage', ...file.storedIn };
      } else {
        await results.put(job.id!, file.buffer);
        stored = { where: 'results' };
      }
      logger.info({ jobId: job.id, requestId, ms: file.processingTime }, 'capture job succeeded');
      return {
        requestId,
        fileName: file.fileName,
        fileSize: file.buffer.length,
        processingTime: file.processingTime,
        mime: file.mime,
        ...(file.storageUrl ? { storageUrl: file.storageUrl } : {}),
        ...(file.aiResult ? { aiResult: file.aiResult } : {}),
        page: file.page,
        quality: file.quality,
        ...(file.metadata ? { metadata: file.metadata } : {}),
        file: stored,
      };
    } catch (error) {
      const failure = error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', 'The capture failed; nothing was charged', { logDetail: error });
      logger.warn({ jobId: job.id, requestId, code: failure.code, err: failure.options.logDetail }, 'capture job failed');
      // The failure travels as JSON in BullMQ's failedReason: the status and the webhook report it.
      throw new Error(JSON.stringify({ code: failure.code, message: failure.message }));
    } finally {
      this.running.delete(controller);
    }
  }

  /** After the job's final state is written: strip its secrets, then queue the webhook. */
  private async ended(job: CaptureJob, type: CaptureWebhookEvent['type']): Promise<void> {
    const { logger, webhooks } = this.deps;
    try {
      const options = { ...job.data.options } as Record<string, unknown>;
      for (const field of SECRET_OPTION_FIELDS) delete options[field];
      const { providerKeyHeader: _dropped, ...rest } = job.data;
      await job.updateData({ ...rest, options: options as CaptureJobPayload['options'] });
    } catch (error) {
      logger.warn({ jobId: job.id, err: error }, 'could not strip the secrets of a finished job');
    }
    if (!job.data.webhookUrl) return;
    try {
      const state = type === 'capture.succeeded' ? 'completed' : 'failed';
      const data = jobView(job, state, `${job.data.baseUrl}${filePath(job.id!)}`);
      const event: CaptureWebhookEvent = { type, data };
      await webhooks.enqueue({ url: job.data.webhookUrl, keyId: job.data.keyId, messageId: `msg_${job.id}`, body: JSON.stringify(event) });
    } catch (error) {
      logger.error({ jobId: job.id, err: error }, 'could not queue the webhook of a finished job');
    }
  }

  /** Stops taking jobs; jobs still running after `graceMs` are left to the stalled-job recovery of other workers. */
  async close(graceMs: number): Promise<void> {
    const closing = this.worker.close();
    const graceful = await Promise.race([closing.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs).unref())]);
    if (!graceful) await this.worker.close(true);
  }
}

import { randomUUID } from 'node:crypto';
import { DelayedError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ApiError } from '../errors.js';
import type { CaptureService } from '../services/capture-service.js';
import { loggableTarget, type RequestLog } from '../services/request-log.js';
import type { RefusedCapture } from '../store/request-log-repository.js';
import type { FinishedCapture } from '../services/capture-types.js';
import type { CreditRepository } from '../store/credit-repository.js';
import type { JobFileLocation } from '../store/job-record.js';
import type { JobRepository } from '../store/job-repository.js';
import { CAPTURE_QUEUE, type CaptureJobPayload } from './job-types.js';
import { failureMessage } from './job-view.js';
import type { JobAnnouncer } from './job-announcer.js';
import { resultKey, type ResultFiles } from './result-files.js';

export interface CaptureWorkerOptions {
  prefix: string;
  concurrency: number;
  lockMs: number;
  /** Attempts whose worker stopped (killed, lost) before a job fails, charging nothing. */
  maxAttempts: number;
  resultTtlSeconds: number;
}

export interface CaptureWorkerDependencies {
  captures: CaptureService;
  credits: CreditRepository;
  repository: JobRepository;
  files: ResultFiles;
  announcer: JobAnnouncer;
  /** The request log: an attempt that ended before it reserved credits (refused) is logged here; others have their ledger row. */
  requestLog?: Pick<RequestLog, 'refused'>;
  logger: Logger;
}

type CaptureJob = Job<CaptureJobPayload>;

/** Why a running attempt was stopped by its own worker. */
const HAND_BACK = 'hand-back';
const LEASE_LOST = 'lease-lost';

/**
 * Renders queued captures with the same CaptureService as `/capture`. Each attempt first claims the
 * job in the database (a lease it renews while it runs): a job already final is not run again, so
 * a rerun after a take-over or a Redis restart finds the earlier success and charges nothing. The
 * file goes to the result store first; then the success, the file's location and the charge are
 * written as one transaction. A failed job records its error and has charged nothing.
 */
export class CaptureWorker {
  private readonly worker: Worker<CaptureJobPayload>;
  private readonly running = new Set<AbortController>();

  constructor(
    connection: Redis,
    private readonly deps: CaptureWorkerDependencies,
    private readonly options: CaptureWorkerOptions,
  ) {
    this.worker = new Worker<CaptureJobPayload>(CAPTURE_QUEUE, (job, token) => this.process(job, token), {
      connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockMs,
      stalledInterval: Math.max(1_000, Math.round(options.lockMs / 2)),
      // The database counts attempts (JOB_MAX_ATTEMPTS); BullMQ's own count only hands a stalled job on.
      maxStalledCount: options.maxAttempts,
    });
    this.worker.on('error', (error) => deps.logger.error({ err: error }, 'capture worker error'));
  }

  private async process(job: CaptureJob, bullToken: string | undefined): Promise<void> {
    const jobId = job.id!;
    const { repository, credits, captures, logger, announcer } = this.deps;
    const token = randomUUID();
    let claim: Awaited<ReturnType<JobRepository['claim']>>;
    try {
      claim = await repository.claim(jobId, token, this.options.lockMs, this.options.maxAttempts);
    } catch (error) {
      // The database is down: the job waits in the queue (not failed, not dropped) and is tried again.
      logger.warn({ jobId, err: error }, 'could not claim a capture job (database); trying again shortly');
      await job.moveToDelayed(Date.now() + Math.min(5_000, this.options.lockMs), bullToken);
      throw new DelayedError();
    }
    if (claim.kind === 'missing') return;
    if (claim.kind === 'finished') {
      logger.info({ jobId, status: claim.job.status }, 'capture job already ended: not run again');
      return;
    }
    if (claim.kind === 'exhausted') {
      await announcer.announce(jobId);
      return;
    }
    if (claim.kind === 'busy') {
      // Another attempt still holds the job: look again when its lease would have ended.
      await job.moveToDelayed(claim.until + 500, bullToken);
      throw new DelayedError();
    }
    // Reservations of earlier attempts belong to workers that died: give them back first.
    for (const requestId of claim.staleReservations) await credits.release(requestId, 'JOB_TAKEN_OVER');
    // The first attempt's ledger row carries the job id itself; later ones (take-overs, hand-backs) their own.
    const requestId = claim.firstLedgerRow ? jobId : randomUUID();

    const controller = new AbortController();
    this.running.add(controller);
    const renewer = setInterval(
      () => {
        repository.renew(jobId, token, this.options.lockMs).then(
          (held) => {
            if (!held) controller.abort(LEASE_LOST);
          },
          (error: unknown) => logger.warn({ jobId, err: error }, 'could not renew the lease of a capture job (database)'),
        );
      },
      Math.max(500, Math.round(this.options.lockMs / 3)),
    );
    const data = job.data;
    const started = Date.now();
    try {
      await captures.capture({
        requestId,
        jobId,
        key: {
          keyId: data.keyId,
          organizationId: data.organizationId,
          userId: null,
          membershipActive: true,
          ...(data.fairShare ? { fairShare: data.fairShare } : {}),
        },
        options: data.options,
        ...(data.providerKeyHeader ? { providerKeyHeader: data.providerKeyHeader } : {}),
        signal: controller.signal,
        mode: 'async',
        kind: data.kind ?? 'async',
        finish: (finished) => this.record(jobId, token, finished),
      });
      logger.info({ jobId, requestId }, 'capture job succeeded');
      await announcer.announce(jobId);
    } catch (error) {
      if (controller.signal.reason === HAND_BACK) {
        // Graceful stop past its grace period: the job goes back to the queue, its reservation released.
        await repository.handBack(jobId, token);
        await job.moveToDelayed(Date.now(), bullToken);
        logger.warn({ jobId }, 'capture job handed back at shutdown');
        throw new DelayedError();
      }
      const current = await repository.get(jobId);
      // Another attempt ended it, or holds it now: nothing of this attempt stands.
      if (!current || current.status === 'succeeded' || current.status === 'failed' || current.leaseToken !== token) return;
      const failure = error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', 'The capture failed', { logDetail: error });
      logger.warn({ jobId, requestId, code: failure.code, err: failure.options.logDetail }, 'capture job failed');
      await this.deps.requestLog?.refused(refusalOf(data, { requestId, jobId, status: failure.status, code: failure.code, started }));
      await repository.fail(
        jobId,
        { code: failure.code, message: failureMessage(failure.message) },
        Date.now() + this.options.resultTtlSeconds * 1000,
      );
      await announcer.announce(jobId);
    } finally {
      clearInterval(renewer);
      this.running.delete(controller);
    }
  }

  /** Stores the file, then records the success (and the charge) as one fact; the file goes again if the job was already over. */
  private async record(jobId: string, token: string, finished: FinishedCapture): Promise<boolean> {
    let file: JobFileLocation;
    if (finished.storedIn) {
      file = { where: 'organization-storage', ...finished.storedIn };
    } else {
      file = { where: 'results', key: resultKey(jobId, token, finished.extension) };
      await this.deps.files.put(file.key, finished.buffer, finished.mime);
    }
    const recorded = await this.deps.repository.succeed(
      jobId,
      finished.charged ? finished.requestId : null,
      finished.credits,
      {
        requestId: finished.requestId,
        fileName: finished.fileName,
        fileSize: finished.buffer.length,
        processingTime: finished.processingTime,
        mime: finished.mime,
        ...(finished.storageUrl ? { storageUrl: finished.storageUrl } : {}),
        ...(finished.aiResult ? { aiResult: finished.aiResult } : {}),
        page: finished.page,
        ...(finished.quality ? { quality: finished.quality } : {}),
        ...(finished.metadata ? { metadata: finished.metadata } : {}),
        file,
      },
      Date.now() + this.options.resultTtlSeconds * 1000,
    );
    if (!recorded && file.where === 'results') {
      await this.deps.files
        .remove(file.key)
        .catch((error: unknown) =>
          this.deps.logger.warn({ jobId, key: file.key, err: error }, 'could not delete the file of a job that had already ended'),
        );
    }
    return recorded;
  }

  /**
   * Graceful stop (SIGTERM): no new jobs; running ones get `graceMs` to finish, then are handed
   * back (queued again, their reservations released) for another worker. A worker killed outright
   * leaves its jobs to the lease: another worker takes them over once it ends.
   */
  async close(graceMs: number): Promise<void> {
    const closing = this.worker.close();
    const graceful = await Promise.race([
      closing.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs).unref()),
    ]);
    if (graceful) return;
    for (const controller of this.running) controller.abort(HAND_BACK);
    const handedBack = await Promise.race([
      closing.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000).unref()),
    ]);
    if (!handedBack) await this.worker.close(true);
  }
}

/** A job attempt that failed before it reserved anything, as the request log records it (ignored when it did reserve). */
function refusalOf(
  data: CaptureJobPayload,
  ended: { requestId: string; jobId: string; status: number; code: string; started: number },
): RefusedCapture {
  const { options } = data;
  return {
    requestId: ended.requestId,
    organizationId: data.organizationId,
    apiKeyId: data.keyId,
    kind: data.kind ?? 'async',
    format: options.format,
    source: options.url !== undefined ? 'url' : 'html',
    target: options.url !== undefined ? loggableTarget(options.url) : null,
    errorCode: ended.code,
    httpStatus: ended.status,
    durationMs: Date.now() - ended.started,
    at: ended.started,
    jobId: ended.jobId,
  };
}

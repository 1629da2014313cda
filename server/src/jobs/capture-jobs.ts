import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { CaptureJobData, PageReport } from '@daguerre/contract';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ApiError, errors } from '../errors.js';
import type { JobQueue } from '../services/queued-capture.js';
import type { StorageUploader } from '../services/storage.js';
import type { JobRecord } from '../store/job-record.js';
import type { JobRepository } from '../store/job-repository.js';
import type { StorageConfigRepository } from '../store/storage-config-repository.js';
import { CAPTURE_QUEUE, storablePayload, type CaptureJobPayload } from './job-types.js';
import { failureMessage, jobView } from './job-view.js';
import type { ResultFiles } from './result-files.js';
import { ignoreBecause } from '../ignore-error.js';

export interface CaptureJobsOptions {
  prefix: string;
  resultTtlSeconds: number;
}

export const statusPath = (jobId: string) => `/captures/${jobId}`;
export const filePath = (jobId: string) => `/captures/${jobId}/file`;

/** A job's file with what the binary response needs; the bytes stream from where the file lives. */
export interface JobFile {
  stream: Readable;
  size: number;
  mime: string;
  fileName: string;
  requestId: string;
  /** What the capture saw: the headers of a binary /capture. */
  page?: PageReport;
}

/**
 * Puts a job on the queue. Finished jobs leave Redis at once (their record is in the database), so
 * adding a job id again after Redis lost it is never refused as a duplicate of a finished one.
 */
export function addToQueue(queue: Queue<CaptureJobPayload>, jobId: string, payload: CaptureJobPayload, priority: number) {
  return queue.add('capture', payload, { jobId, priority, attempts: 1, removeOnComplete: true, removeOnFail: true });
}

/**
 * The API side of async captures: record and queue a job, report it to its own organization, hand
 * out its file. The record is in the database and the file in the result store; Redis holds only
 * the queue entry, so both survive a Redis restarted empty.
 */
export class CaptureJobs implements JobQueue {
  readonly queue: Queue<CaptureJobPayload>;

  constructor(
    connection: Redis,
    private readonly deps: { repository: JobRepository; files: ResultFiles; uploader: StorageUploader; configs: StorageConfigRepository },
    private readonly options: CaptureJobsOptions,
  ) {
    this.queue = new Queue(CAPTURE_QUEUE, { connection, prefix: options.prefix });
  }

  async enqueue(payload: CaptureJobPayload): Promise<string> {
    const jobId = randomUUID();
    const stored = storablePayload(payload);
    let priority: number;
    try {
      priority = await this.deps.repository.create({
        id: jobId,
        organizationId: payload.organizationId,
        apiKeyId: payload.keyId,
        payload: stored.json,
        hasSecrets: stored.hasSecrets,
        baseUrl: payload.baseUrl,
        ...(payload.webhookUrl !== undefined ? { webhookUrl: payload.webhookUrl } : {}),
        ...(payload.fairShare ? { weight: payload.fairShare.weight } : {}),
      });
    } catch (error) {
      throw errors.storeUnavailable('database', error);
    }
    try {
      await addToQueue(this.queue, jobId, payload, priority);
    } catch (error) {
      // Not queued: the record goes too, so the caller's retry is the only copy (a record whose
      // removal failed was never marked enqueued: the upkeep deletes it).
      await this.deps.repository.remove(jobId).catch(ignoreBecause('a record never marked enqueued is deleted by the upkeep'));
      throw errors.storeUnavailable('job queue (Redis)', error);
    }
    try {
      await this.deps.repository.markEnqueued(jobId);
    } catch (error) {
      await this.deps.repository.remove(jobId).catch(ignoreBecause('a record never marked enqueued is deleted by the upkeep'));
      throw errors.storeUnavailable('database', error);
    }
    return jobId;
  }

  /** The job, only for its own organization: anyone else learns nothing, not even that it exists. */
  private async own(jobId: string, organizationId: string): Promise<JobRecord> {
    let job: JobRecord | undefined;
    try {
      job = /^[0-9a-f-]{36}$/i.test(jobId) ? await this.deps.repository.get(jobId) : undefined;
    } catch (error) {
      throw errors.storeUnavailable('database', error);
    }
    if (!job || job.organizationId !== organizationId) {
      throw new ApiError(
        'NOT_FOUND',
        `No capture job ${jobId} for this organization (finished jobs are kept for ${this.options.resultTtlSeconds} s)`,
      );
    }
    return job;
  }

  async view(jobId: string, organizationId: string): Promise<CaptureJobData> {
    const job = await this.own(jobId, organizationId);
    return jobView(job, `${job.baseUrl}${filePath(jobId)}`);
  }

  async file(jobId: string, organizationId: string): Promise<JobFile> {
    const job = await this.own(jobId, organizationId);
    if (job.status !== 'succeeded' || !job.result) {
      const detail =
        job.status === 'failed'
          ? `failed (${failureMessage(job.error?.message ?? 'the capture failed')})`
          : `${job.status}; poll GET /captures/{jobId} until it is succeeded`;
      throw new ApiError('JOB_NOT_FINISHED', `Capture job ${jobId} has no file: its status is ${detail}`);
    }
    const result = job.result;
    // A record that says succeeded but no file: swept, or (operator's error) a results directory not
    // shared between the worker that wrote it and this instance; the log names the store.
    const expired = () =>
      new ApiError(
        'NOT_FOUND',
        `The file of capture job ${jobId} is no longer in the result store (files are kept for ${this.options.resultTtlSeconds} s)`,
        {
          logDetail: {
            jobId,
            store: this.deps.files.description,
            hint: 'API instances and workers on different hosts need a shared RESULTS_DIR or RESULTS_S3_BUCKET',
          },
        },
      );
    let opened: { stream: Readable; size: number } | undefined;
    if (result.file.where === 'organization-storage') {
      const target = await this.deps.configs.getDecrypted(organizationId, result.file.configName);
      if (!target)
        throw new ApiError('NOT_FOUND', `The file of capture job ${jobId} was stored in a storage configuration that no longer exists`);
      const buffer = await this.deps.uploader.download(target, result.file.key);
      opened = { stream: Readable.from([buffer]), size: buffer.length };
    } else {
      opened = await this.deps.files.open(result.file.key).catch((error: unknown) => {
        throw errors.storeUnavailable(`result store (${this.deps.files.description})`, error);
      });
    }
    if (!opened) throw expired();
    return {
      ...opened,
      mime: result.mime,
      fileName: result.fileName,
      requestId: result.requestId,
      ...(result.page ? { page: result.page as PageReport } : {}),
    };
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

import { randomUUID } from 'node:crypto';
import type { CaptureJobData, PageReport } from '@rendershot/contract';
import { Queue, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { ApiError, errors } from '../errors.js';
import type { StorageUploader } from '../services/storage.js';
import type { StorageConfigRepository } from '../store/storage-config-repository.js';
import { CAPTURE_QUEUE, type CaptureJobOutcome, type CaptureJobPayload } from './job-types.js';
import { jobView } from './job-view.js';
import { ResultStore } from './result-store.js';

export interface CaptureJobsOptions {
  prefix: string;
  resultTtlSeconds: number;
}

export const statusPath = (jobId: string) => `/captures/${jobId}`;
export const filePath = (jobId: string) => `/captures/${jobId}/file`;

/** A job's file with what the binary response needs. */
export interface JobFile {
  buffer: Buffer;
  mime: string;
  fileName: string;
  requestId: string;
  /** What the capture saw (absent for jobs finished before it was recorded): the headers of a binary /capture. */
  page?: PageReport;
}

/**
 * The API side of async captures: queue a job, report it to its own organization, hand out its file.
 * Rendering happens in CaptureWorker, in this process or any other that shares the Redis.
 */
export class CaptureJobs {
  readonly queue: Queue<CaptureJobPayload, CaptureJobOutcome>;
  readonly results: ResultStore;

  constructor(
    connection: Redis,
    private readonly commands: Redis,
    private readonly storage: { uploader: StorageUploader; configs: StorageConfigRepository },
    private readonly options: CaptureJobsOptions,
  ) {
    this.queue = new Queue(CAPTURE_QUEUE, { connection, prefix: options.prefix });
    this.results = new ResultStore(commands, options.prefix, options.resultTtlSeconds);
  }

  async enqueue(payload: Omit<CaptureJobPayload, 'attemptRequestIds'>): Promise<string> {
    const jobId = randomUUID();
    const ttl = this.options.resultTtlSeconds;
    try {
      await this.queue.add('capture', { ...payload, attemptRequestIds: [] }, {
        jobId,
        // A capture that failed is final (its error is the answer); a worker that died is another
        // matter: BullMQ's stalled-job recovery hands that job to another worker.
        attempts: 1,
        removeOnComplete: { age: ttl },
        removeOnFail: { age: ttl },
      });
    } catch (error) {
      throw errors.storeUnavailable('job queue (Redis)', error);
    }
    return jobId;
  }

  /** The job, only for its own organization: anyone else learns nothing, not even that it exists. */
  private async own(jobId: string, organizationId: string): Promise<Job<CaptureJobPayload, CaptureJobOutcome>> {
    let job: Job<CaptureJobPayload, CaptureJobOutcome> | undefined;
    try {
      job = /^[0-9a-f-]{36}$/i.test(jobId) ? await this.queue.getJob(jobId) : undefined;
    } catch (error) {
      throw errors.storeUnavailable('job queue (Redis)', error);
    }
    if (!job || job.data.organizationId !== organizationId) {
      throw new ApiError('NOT_FOUND', `No capture job ${jobId} for this organization (finished jobs are kept for ${this.options.resultTtlSeconds} s)`);
    }
    return job;
  }

  async view(jobId: string, organizationId: string): Promise<CaptureJobData> {
    const job = await this.own(jobId, organizationId);
    const state = await job.getState();
    return jobView(job, state, `${job.data.baseUrl}${filePath(jobId)}`);
  }

  async file(jobId: string, organizationId: string): Promise<JobFile> {
    const job = await this.own(jobId, organizationId);
    const state = await job.getState();
    if (state !== 'completed' || !job.returnvalue) {
      const status = jobView(job, state, '').status;
      throw new ApiError('JOB_NOT_FINISHED', `Capture job ${jobId} has no file: its status is ${status}${status === 'failed' ? '' : '; poll GET /captures/{jobId} until it is succeeded'}`);
    }
    const outcome = job.returnvalue;
    let buffer: Buffer | null;
    if (outcome.file.where === 'organization-storage') {
      const target = await this.storage.configs.getDecrypted(organizationId, outcome.file.configName);
      if (!target) throw new ApiError('NOT_FOUND', `The file of capture job ${jobId} was stored in a storage configuration that no longer exists`);
      buffer = await this.storage.uploader.download(target, outcome.file.key);
    } else {
      buffer = await this.results.get(jobId).catch((error: unknown) => {
        throw errors.storeUnavailable('result store (Redis)', error);
      });
    }
    if (!buffer) throw new ApiError('NOT_FOUND', `The file of capture job ${jobId} has expired (files are kept for ${this.options.resultTtlSeconds} s)`);
    return { buffer, mime: outcome.mime, fileName: outcome.fileName, requestId: outcome.requestId, ...(outcome.page ? { page: outcome.page } : {}) };
  }

  async close(): Promise<void> {
    await this.queue.close();
    this.commands.disconnect();
  }
}

import { CANCELLED_CODE, type CaptureJobData } from '@daguerre/contract';
import { errors } from '../errors.js';
import type { JobRepository } from '../store/job-repository.js';
import type { CaptureJobs } from './capture-jobs.js';
import type { JobAnnouncer } from './job-announcer.js';
import { ignoreBecause } from '../ignore-error.js';

/**
 * Cancelling async jobs: one job (`DELETE /captures/{jobId}`) or the live items of a batch
 * (capture-batches.ts). A cancelled job is failed with code CANCELLED, so it is never charged.
 */
export class JobWithdrawal {
  constructor(
    private readonly deps: { jobs: CaptureJobs; jobRecords: JobRepository; announcer: JobAnnouncer },
    private readonly options: { resultTtlSeconds: number },
  ) {}

  private async db<T>(work: Promise<T>): Promise<T> {
    return work.catch((error: unknown) => {
      throw errors.storeUnavailable('database', error);
    });
  }

  /** Cancels the organization's job if it has not ended; a job that ended is answered as it is (404 for another organization's). */
  async cancel(jobId: string, organizationId: string): Promise<CaptureJobData> {
    const job = await this.deps.jobs.view(jobId, organizationId);
    if (job.status === 'queued' || job.status === 'active') await this.withdraw(jobId, 'DELETE /captures/{jobId}');
    return this.deps.jobs.view(jobId, organizationId);
  }

  /**
   * Ends a job that has not ended as failed with code CANCELLED: a worker that has not taken it
   * finds it final and skips it; one rendering it loses the final write and releases its credits.
   * `forget` drops the record too (a batch that could not be queued whole: nobody has the id).
   */
  async withdraw(jobId: string, why: string, options: { forget?: boolean } = {}): Promise<void> {
    const ended = await this.db(
      this.deps.jobRecords.fail(
        jobId,
        { code: CANCELLED_CODE, message: `Cancelled: ${why}; nothing was charged` },
        Date.now() + this.options.resultTtlSeconds * 1000,
      ),
    );
    // Best effort: a job still waiting leaves the queue at once (a locked one is skipped by its worker).
    await this.deps.jobs.queue.remove(jobId).catch(ignoreBecause('a locked job is skipped by its worker, which finds its record final'));
    if (!ended) return;
    if (options.forget) await this.db(this.deps.jobRecords.remove(jobId));
    // The job's own webhook (capture.failed, code CANCELLED) goes now rather than at the next
    // upkeep; the end-of-job listeners complete its batch when it was the last live item.
    else await this.deps.announcer.announce(jobId);
  }
}

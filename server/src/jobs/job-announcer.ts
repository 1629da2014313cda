import type { CaptureWebhookEvent } from '@daguerre/contract';
import type { Logger } from 'pino';
import type { JobRecord } from '../store/job-record.js';
import type { JobRepository } from '../store/job-repository.js';
import { filePath } from './capture-jobs.js';
import { jobView } from './job-view.js';
import type { WebhookQueue } from './webhook-delivery.js';

/**
 * Queues the webhook of a job that ended, from its database record. A job's record says whether its
 * webhook is still to be queued (`pending`), so one that could not be queued (Redis down at that
 * moment) is queued later by the upkeep; the message id makes a second enqueue a no-op.
 */
export class JobAnnouncer {
  private readonly endedListeners: Array<(jobId: string) => Promise<void>> = [];

  constructor(
    private readonly repository: JobRepository,
    private readonly webhooks: WebhookQueue,
    private readonly logger: Logger,
  ) {}

  /** Called for every job that ended, after its own webhook (a batch completes with its last item: docs/bulk.md). */
  onEnded(listener: (jobId: string) => Promise<void>): void {
    this.endedListeners.push(listener);
  }

  async announce(jobId: string): Promise<void> {
    try {
      const job = await this.repository.get(jobId);
      if (job) await this.announceRecord(job);
    } catch (error) {
      this.logger.warn({ jobId, err: error }, 'could not queue the webhook of a finished job; the upkeep retries');
    }
    for (const listener of this.endedListeners) await listener(jobId);
  }

  async announceRecord(job: JobRecord): Promise<void> {
    if (job.webhookState !== 'pending' || !job.webhookUrl || (job.status !== 'succeeded' && job.status !== 'failed')) return;
    const event: CaptureWebhookEvent = {
      type: job.status === 'succeeded' ? 'capture.succeeded' : 'capture.failed',
      data: jobView(job, `${job.baseUrl}${filePath(job.id)}`),
    };
    await this.webhooks.enqueue({
      url: job.webhookUrl,
      keyId: job.apiKeyId ?? '',
      organizationId: job.organizationId,
      messageId: `msg_${job.id}`,
      body: JSON.stringify(event),
    });
    await this.repository.markWebhookQueued(job.id);
  }
}

import { WEBHOOK_EVENT_TYPES, type WebhookAttempt, type WebhookEventLog, type WebhookEventStatus } from '@daguerre/contract';
import type { Logger } from 'pino';
import { ApiError, errors } from '../errors.js';
import type { BatchRepository } from '../store/batch-repository.js';
import type { JobRepository } from '../store/job-repository.js';
import type {
  WebhookAttemptRecord,
  WebhookEventRecord,
  WebhookEventRepository,
  WebhookSubject,
} from '../store/webhook-event-repository.js';
import type { WebhookQueue } from './webhook-delivery.js';

const iso = (ms: number) => new Date(ms).toISOString();
const succeeded = (attempt: WebhookAttemptRecord) =>
  attempt.responseStatus !== null && attempt.responseStatus >= 200 && attempt.responseStatus < 300;

function statusOf(attempts: WebhookAttemptRecord[]): WebhookEventStatus {
  if (attempts.some(succeeded)) return 'delivered';
  const last = attempts.at(-1);
  if (!last) return 'queued';
  return last.nextRetryAt !== null ? 'retrying' : 'failed';
}

function attemptView(attempt: WebhookAttemptRecord): WebhookAttempt {
  return {
    attempt: attempt.attempt,
    resend: attempt.deliveryId !== attempt.eventId,
    attemptedAt: iso(attempt.attemptedAt),
    responseStatus: attempt.responseStatus,
    durationMs: attempt.durationMs,
    error: attempt.error,
    nextRetryAt: attempt.nextRetryAt === null ? null : iso(attempt.nextRetryAt),
  };
}

/**
 * An event as GET /webhooks/events answers it. The URL is as it was given: the faces (API,
 * dashboard) mask its secret-looking query values, with the redaction the logs use.
 */
export function webhookEventView(event: WebhookEventRecord, attempts: WebhookAttemptRecord[]): WebhookEventLog {
  const type = (WEBHOOK_EVENT_TYPES as readonly string[]).includes(event.eventType)
    ? (event.eventType as WebhookEventLog['type'])
    : 'capture.failed';
  return {
    eventId: event.id,
    type,
    ...(event.jobId ? { jobId: event.jobId } : {}),
    ...(event.batchId ? { batchId: event.batchId } : {}),
    url: event.url,
    createdAt: iso(event.createdAt),
    status: statusOf(attempts),
    attempts: attempts.map(attemptView),
  };
}

const UUID = /^[0-9a-f-]{36}$/i;
const EVENT_ID = /^msg_(batch_)?[0-9a-f-]{36}$/i;

/**
 * The webhook deliveries of jobs and batches, for their organization only
 * (docs/async-and-webhooks.md): what was sent and each attempt, and sending an event again under
 * its own id.
 */
export class WebhookHistory {
  constructor(
    private readonly deps: {
      events: WebhookEventRepository;
      webhooks: WebhookQueue;
      jobRecords: JobRepository;
      batches: BatchRepository;
      logger: Logger;
    },
  ) {}

  private async db<T>(work: Promise<T>): Promise<T> {
    return work.catch((error: unknown) => {
      throw errors.storeUnavailable('database', error);
    });
  }

  /** Whether the job or batch is the organization's: another organization learns nothing, not even that it exists. */
  private async owns(organizationId: string, subject: WebhookSubject): Promise<boolean> {
    const id = 'jobId' in subject ? subject.jobId : subject.batchId;
    if (!UUID.test(id)) return false;
    const record = 'jobId' in subject ? await this.db(this.deps.jobRecords.get(id)) : await this.db(this.deps.batches.get(id));
    return record?.organizationId === organizationId;
  }

  /** The events of a job or batch with their attempts, oldest first; 404 for one of another organization. */
  async list(organizationId: string, subject: WebhookSubject): Promise<WebhookEventLog[]> {
    const events = await this.db(this.deps.events.eventsOf(organizationId, subject));
    // No event on record: a job or batch without a webhook (an empty list), or not the organization's.
    if (events.length === 0 && !(await this.owns(organizationId, subject))) {
      const what = 'jobId' in subject ? `capture job ${subject.jobId}` : `batch ${subject.batchId}`;
      throw new ApiError('NOT_FOUND', `No ${what} for this organization`);
    }
    return this.withAttempts(events);
  }

  async event(eventId: string, organizationId: string): Promise<WebhookEventLog> {
    return (await this.withAttempts([await this.own(eventId, organizationId)]))[0]!;
  }

  /** Queues one more attempt of the event: the same webhook-id and body bytes, signed afresh. */
  async redeliver(eventId: string, organizationId: string): Promise<WebhookEventLog> {
    const event = await this.own(eventId, organizationId);
    try {
      await this.deps.webhooks.resend({
        url: event.url,
        keyId: event.apiKeyId ?? '',
        organizationId: event.organizationId,
        messageId: event.id,
        body: event.body.toString('utf8'),
      });
    } catch (error) {
      throw errors.storeUnavailable('webhook queue (Redis)', error);
    }
    this.deps.logger.info({ messageId: event.id, organizationId }, 'webhook event queued again');
    return (await this.withAttempts([event]))[0]!;
  }

  private async own(eventId: string, organizationId: string): Promise<WebhookEventRecord> {
    const event = EVENT_ID.test(eventId) ? await this.db(this.deps.events.get(eventId)) : undefined;
    if (!event || event.organizationId !== organizationId)
      throw new ApiError('NOT_FOUND', `No webhook event ${eventId} for this organization`);
    return event;
  }

  private async withAttempts(events: WebhookEventRecord[]): Promise<WebhookEventLog[]> {
    const attempts = await this.db(this.deps.events.attemptsOf(events.map((event) => event.id)));
    return events.map((event) =>
      webhookEventView(
        event,
        attempts.filter((attempt) => attempt.eventId === event.id),
      ),
    );
  }
}

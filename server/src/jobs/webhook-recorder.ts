import type { Logger } from 'pino';
import type { WebhookAttemptRecord, WebhookEventRepository, WebhookEventRecord } from '../store/webhook-event-repository.js';
import { webhookSubjectOf, type WebhookDelivery } from './job-types.js';

/** What the worker knows of one attempt; the event it belongs to comes with the delivery. */
export type AttemptOutcome = Omit<WebhookAttemptRecord, 'eventId'>;

/** The event a delivery carries, as it is kept; undefined for one without an organization (queued by an older release). */
export function eventOf(delivery: WebhookDelivery): Omit<WebhookEventRecord, 'createdAt'> | undefined {
  if (!delivery.organizationId) return undefined;
  const subject = webhookSubjectOf(delivery.messageId);
  let eventType = 'unknown';
  try {
    eventType = String((JSON.parse(delivery.body) as { type?: unknown }).type ?? 'unknown');
  } catch {
    // Every body is JSON.stringify's; an unreadable one is still kept, typed unknown.
  }
  return {
    id: delivery.messageId,
    organizationId: delivery.organizationId,
    jobId: subject && 'jobId' in subject ? subject.jobId : null,
    batchId: subject && 'batchId' in subject ? subject.batchId : null,
    eventType,
    url: delivery.url,
    apiKeyId: delivery.keyId || null,
    body: Buffer.from(delivery.body, 'utf8'),
  };
}

/**
 * Writes webhook events and attempts on record, best effort: a database that cannot be reached
 * costs the record, never the delivery (every method resolves, and logs what it could not write).
 */
export class WebhookRecorder {
  constructor(
    private readonly repository: WebhookEventRepository,
    private readonly logger: Logger,
  ) {}

  async queued(delivery: WebhookDelivery): Promise<void> {
    const event = eventOf(delivery);
    if (!event) return;
    await this.repository
      .record(event)
      .catch((error: unknown) => this.logger.warn({ messageId: delivery.messageId, err: error }, 'could not record a webhook event'));
  }

  async attempted(delivery: WebhookDelivery, outcome: AttemptOutcome): Promise<void> {
    const event = eventOf(delivery);
    if (!event) return;
    try {
      // The event first (a no-op when on record): an attempt never points at a missing event.
      await this.repository.record(event);
      await this.repository.addAttempt({ eventId: event.id, ...outcome });
    } catch (error) {
      this.logger.warn({ messageId: delivery.messageId, attempt: outcome.attempt, err: error }, 'could not record a webhook attempt');
    }
  }
}

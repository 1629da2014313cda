import { randomUUID } from 'node:crypto';
import type { MonitorEventType, MonitorRun, MonitorWebhookEvent } from '@daguerre/contract';
import type { Logger } from 'pino';
import type { WebhookDelivery } from '../jobs/job-types.js';
import type { MonitorRecord } from '../store/monitor-repository.js';

/** The prefix of a monitor event's message id (job-types.ts: it names no job nor batch). */
export const MONITOR_MESSAGE_PREFIX = 'msg_mon_';

/**
 * A monitor's webhooks, through the same queue as the jobs' (signed with the signing secret of the
 * key that created the monitor, retried, and on record in GET /webhooks). A run's event has the
 * run's id in its message id, so one run never alerts twice; paused and resumed get ids of their own.
 */
export class MonitorAlerts {
  constructor(
    private readonly webhooks: { enqueue(delivery: WebhookDelivery): Promise<void> },
    private readonly logger: Logger,
  ) {}

  changed(monitor: MonitorRecord, run: MonitorRun, baseline: MonitorRun | undefined): Promise<void> {
    const images = { newUrl: run.imageUrl, baselineUrl: baseline?.imageUrl ?? null, diffUrl: run.diff?.diffImageUrl ?? null };
    return this.send(monitor, 'monitor.changed', `${MONITOR_MESSAGE_PREFIX}${run.runId}`, { run, images });
  }

  failed(monitor: MonitorRecord, run: MonitorRun): Promise<void> {
    return this.send(monitor, 'monitor.failed', `${MONITOR_MESSAGE_PREFIX}${run.runId}`, { run });
  }

  paused(monitor: MonitorRecord, reason: string): Promise<void> {
    return this.send(monitor, 'monitor.paused', `${MONITOR_MESSAGE_PREFIX}paused_${randomUUID()}`, { reason });
  }

  resumed(monitor: MonitorRecord, reason: string): Promise<void> {
    return this.send(monitor, 'monitor.resumed', `${MONITOR_MESSAGE_PREFIX}resumed_${randomUUID()}`, { reason });
  }

  /** Best effort: an alert that could not be queued (Redis down) is logged; the run's record stands either way. */
  private async send(
    monitor: MonitorRecord,
    type: MonitorEventType,
    messageId: string,
    extra: Partial<MonitorWebhookEvent['data']>,
  ): Promise<void> {
    if (!monitor.webhookUrl) return;
    const event: MonitorWebhookEvent = {
      type,
      timestamp: new Date().toISOString(),
      data: { monitorId: monitor.id, name: monitor.name, url: monitor.url, ...extra },
    };
    try {
      await this.webhooks.enqueue({
        url: monitor.webhookUrl,
        keyId: monitor.apiKeyId ?? '',
        organizationId: monitor.organizationId,
        messageId,
        body: JSON.stringify(event),
      });
    } catch (error) {
      this.logger.warn({ monitorId: monitor.id, type, err: error }, 'could not queue a monitor webhook');
    }
  }
}

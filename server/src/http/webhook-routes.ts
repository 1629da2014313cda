import type { WebhookEventLog, WebhookEventsQuery } from '@daguerre/contract';
import type { Response } from 'express';
import { ApiError } from '../errors.js';
import { keyOrganization } from '../services/usage-service.js';
import type { WebhookHistory } from '../jobs/webhook-history.js';
import { contextOf } from './request-context.js';
import { redactUrl } from '../security/redaction.js';

export interface WebhookRouteDependencies {
  /** Undefined without REDIS_URL: webhooks then answer 503. */
  webhooks: WebhookHistory | undefined;
}

function requireWebhooks(webhooks: WebhookHistory | undefined): WebhookHistory {
  if (!webhooks) {
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      'Webhooks need a Redis server: this server runs without REDIS_URL, so no job or batch has a webhook. Ask the operator to set REDIS_URL.',
      {
        retryAfterSeconds: 300,
      },
    );
  }
  return webhooks;
}

const organizationOf = (res: Response): string => keyOrganization(contextOf(res).auth!).organizationId;

/** A webhookUrl's secret-looking query values are masked as the logs mask them (a receiver's token, say). */
const shown = (event: WebhookEventLog): WebhookEventLog => ({ ...event, url: redactUrl(event.url) });

/** `GET /webhooks/events` and `POST /webhooks/events/{eventId}/redeliver` (docs/async-and-webhooks.md). */
export function webhookHandlers(deps: WebhookRouteDependencies) {
  return {
    async list({ query, res }: { query: WebhookEventsQuery; res: Response }) {
      const webhooks = requireWebhooks(deps.webhooks);
      const subject = query.jobId !== undefined ? { jobId: query.jobId } : { batchId: query.batchId! };
      const events = await webhooks.list(organizationOf(res), subject);
      return { status: 200 as const, body: { success: true as const, data: { events: events.map(shown) } } };
    },

    async redeliver({ eventId, res }: { eventId: string; res: Response }) {
      const webhooks = requireWebhooks(deps.webhooks);
      const event = await webhooks.redeliver(eventId, organizationOf(res));
      return { status: 202 as const, body: { success: true as const, data: shown(event) } };
    },
  };
}

import type { WebhookAttempt, WebhookEventLog } from '@daguerre/contract';
import { redactUrl } from '../../security/redaction.js';
import { html, type SafeHtml } from '../html.js';
import { DASHBOARD_PATH, type DashboardContext } from '../session.js';
import { formatDuration, time } from './format.js';
import { cell } from './job-views.js';
import { badge, emptyState, postButton } from './layout.js';

const EVENT_BADGE: Record<WebhookEventLog['status'], 'ok' | 'warn' | 'bad' | 'neutral' | 'accent'> = {
  queued: 'neutral',
  delivered: 'ok',
  retrying: 'warn',
  failed: 'bad',
};

export const redeliverHref = (eventId: string) => `${DASHBOARD_PATH}/webhook-events/${encodeURIComponent(eventId)}/redeliver`;

function responseOf(attempt: WebhookAttempt): SafeHtml {
  if (attempt.responseStatus === null) return html`<span class="muted">no answer</span>`;
  const ok = attempt.responseStatus >= 200 && attempt.responseStatus < 300;
  return badge(ok ? 'ok' : 'bad', String(attempt.responseStatus));
}

function attemptsTable(attempts: WebhookAttempt[]): SafeHtml {
  return html`<div class="table-wrap"><table class="table stack-table webhook-attempts">
    <thead><tr>
      <th scope="col">Time</th><th scope="col">Attempt</th><th scope="col">Response</th><th scope="col" class="num">Duration</th>
      <th scope="col">Next retry</th><th scope="col">Error</th>
    </tr></thead>
    <tbody>${attempts.map(
      (
        attempt,
      ) => html`<tr class="webhook-attempt" data-attempt="${attempt.attempt}" data-resend="${attempt.resend}" data-status="${attempt.responseStatus ?? ''}">
        ${cell('Time', time(Date.parse(attempt.attemptedAt)))}
        ${cell('Attempt', attempt.resend ? html`#${attempt.attempt} <span class="muted">(sent again)</span>` : `#${attempt.attempt}`)}
        ${cell('Response', responseOf(attempt))}
        ${cell('Duration', formatDuration(attempt.durationMs), 'num')}
        ${cell('Next retry', attempt.nextRetryAt ? time(Date.parse(attempt.nextRetryAt)) : html`<span class="muted">none</span>`)}
        ${cell('Error', attempt.error ?? html`<span class="muted">—</span>`, 'wrap')}
      </tr>`,
    )}</tbody>
  </table></div>`;
}

function eventBlock(ctx: DashboardContext, event: WebhookEventLog, canResend: boolean): SafeHtml {
  return html`<article class="webhook-event" data-event-id="${event.eventId}" aria-label="Webhook event ${event.eventId}">
    <div class="webhook-event-header">
      <div class="webhook-event-title">
        <strong>${event.type}</strong> ${badge(EVENT_BADGE[event.status], event.status)}
        <span class="muted">queued ${time(Date.parse(event.createdAt))}</span>
      </div>
      ${canResend ? postButton(ctx, redeliverHref(event.eventId), 'Send again', 'button button-small') : ''}
    </div>
    <dl class="details webhook-event-details">
      <div><dt>webhook-id</dt><dd><code>${event.eventId}</code></dd></div>
      <div><dt>URL</dt><dd><code>${redactUrl(event.url)}</code></dd></div>
    </dl>
    ${event.attempts.length ? attemptsTable(event.attempts) : html`<p class="muted webhook-no-attempt">No attempt yet: it is on its way.</p>`}
  </article>`;
}

/**
 * The webhook of a job or batch: each event with its attempts (time, response status, duration,
 * next retry) and a button that sends the event again under the same webhook-id.
 */
export function webhookEventsCard(
  ctx: DashboardContext,
  options: { events: WebhookEventLog[]; hasWebhook: boolean; canResend: boolean; pending: string },
): SafeHtml {
  const { events, hasWebhook, canResend } = options;
  const body = !hasWebhook
    ? emptyState('No webhook', html`It was sent without <code>webhookUrl</code>, so nothing is delivered.`)
    : events.length === 0
      ? emptyState('No event yet', options.pending)
      : html`${events.map((event) => eventBlock(ctx, event, canResend))}`;
  return html`<section class="card card-flush webhook-events" aria-labelledby="webhook-title">
    <div class="card-header"><h2 id="webhook-title">Webhook deliveries</h2><span class="muted">signed with Standard Webhooks; “Send again” keeps the webhook-id</span></div>
    ${body}
  </section>`;
}

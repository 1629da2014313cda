import type { WebhookEventLog } from '@daguerre/contract';
import { failureMessage } from '../../jobs/job-view.js';
import type { JobRecord } from '../../store/job-record.js';
import { html, type HtmlValue, type SafeHtml } from '../html.js';
import type { DashboardContext } from '../session.js';
import { formatBytes, time } from './format.js';
import { batchLink, jobFileHref, jobHref, jobStatusBadge, jobTarget, shownStatus } from './job-views.js';
import { flashBanner, page, pageHeading, postButton, type Assets } from './layout.js';
import { webhookEventsCard } from './webhook-events-card.js';

export interface JobPageView {
  ctx: DashboardContext;
  assets: Assets;
  job: JobRecord;
  /** The name of the API key that sent it, when the key still exists. */
  keyName: string | undefined;
  batchId: string | undefined;
  events: WebhookEventLog[];
  /** Whether the queue is there to act (cancel, send again): not without REDIS_URL. */
  canAct: boolean;
}

const row = (label: string, value: HtmlValue, name = '') =>
  html`<div${name ? html` data-field="${name}"` : ''}><dt>${label}</dt><dd>${value}</dd></div>`;

function fileRow(job: JobRecord): SafeHtml {
  const result = job.result;
  if (job.status !== 'succeeded' || !result)
    return row('File', html`<span class="muted">none${job.status === 'queued' || job.status === 'active' ? ' yet' : ''}</span>`, 'file');
  return row(
    'File',
    html`<a href="${jobFileHref(job.id)}" class="job-file-link">${result.fileName}</a> <span class="muted">${result.mime}, ${formatBytes(result.fileSize)}</span>`,
    'file',
  );
}

function detailsCard(view: JobPageView): SafeHtml {
  const { job } = view;
  const { target, format } = jobTarget(job.payload);
  const error = job.status === 'failed' ? (job.error ?? { code: 'OPERATION_FAILED', message: 'The capture failed' }) : undefined;
  return html`<section class="card job-details" aria-labelledby="job-details-title">
    <h2 id="job-details-title">Details</h2>
    <dl class="details">
      ${row('Status', jobStatusBadge(shownStatus(job)), 'status')}
      ${row('Format', html`<span class="format">${format}</span>`, 'format')}
      ${row('Target', html`<code>${target}</code>`, 'target')}
      ${row('API key', view.keyName ?? html`<span class="muted">deleted</span>`, 'key')}
      ${view.batchId ? row('Batch', batchLink(view.batchId), 'batch') : ''}
      ${row('Created', time(job.createdAt), 'created')}
      ${row('Started', time(job.status === 'queued' ? null : job.startedAt), 'started')}
      ${row('Finished', time(job.status === 'succeeded' || job.status === 'failed' ? job.finishedAt : null), 'finished')}
      ${row('Credits', html`${job.creditsCharged} <span class="muted">${job.status === 'succeeded' ? 'charged' : 'a job is charged only when it succeeds'}</span>`, 'credits')}
      ${error ? row('Error', html`<code class="error-code">${error.code}</code> ${failureMessage(error.message)}`, 'error') : ''}
      ${fileRow(job)}
    </dl>
  </section>`;
}

/** One async job: its state, what it captured, its file, its charge and its webhook's deliveries. */
export function jobPage(view: JobPageView): SafeHtml {
  const { ctx, job } = view;
  const live = job.status === 'queued' || job.status === 'active';
  const cancel = live && view.canAct ? postButton(ctx, `${jobHref(job.id)}/cancel`, 'Cancel job', 'button button-danger-ghost') : '';
  const body = html`${pageHeading('Job', html`<code class="job-id">${job.id}</code>`, cancel)}
  ${flashBanner(ctx.flash)}
  <div class="stack">
    ${detailsCard(view)}
    ${webhookEventsCard(ctx, {
      events: view.events,
      hasWebhook: job.webhookUrl !== null,
      canResend: view.canAct,
      pending: 'The webhook is sent when the job ends.',
    })}
  </div>`;
  return page({ title: `Job ${job.id.slice(0, 8)}`, body, assets: view.assets, ctx, section: 'jobs' });
}

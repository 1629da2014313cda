import type { BatchData, BatchItem, WebhookEventLog } from '@daguerre/contract';
import { html, type SafeHtml } from '../html.js';
import type { DashboardContext } from '../session.js';
import { time } from './format.js';
import { batchHref, cell, jobFileHref, jobLink, jobStatusBadge } from './job-views.js';
import { badge, flashBanner, page, pageHeading, postButton, type Assets } from './layout.js';
import { webhookEventsCard } from './webhook-events-card.js';

export interface BatchPageView {
  ctx: DashboardContext;
  assets: Assets;
  batch: BatchData;
  /** Credits charged per item index (the items' own jobs). */
  credits: Map<number, number>;
  hasWebhook: boolean;
  events: WebhookEventLog[];
  /** Whether the queue is there to act (cancel, send again): not without REDIS_URL. */
  canAct: boolean;
}

const BATCH_BADGE: Record<BatchData['status'], 'ok' | 'warn' | 'neutral' | 'accent'> = {
  queued: 'neutral',
  running: 'accent',
  completed: 'ok',
  cancelled: 'warn',
};

function itemRow(item: BatchItem, credits: number | undefined): SafeHtml {
  return html`<tr data-index="${item.index}" data-job-id="${item.jobId}">
    ${cell('#', item.index, 'num')}
    ${cell('Job', jobLink(item.jobId))}
    ${cell('Status', jobStatusBadge(item.status))}
    ${cell('Error', item.error ? html`<code class="error-code">${item.error.code}</code> ${item.error.message}` : html`<span class="muted">—</span>`, 'wrap')}
    ${cell('File', item.status === 'succeeded' ? html`<a href="${jobFileHref(item.jobId)}" class="job-file-link">Open</a>` : html`<span class="muted">—</span>`)}
    ${cell('Credits', credits ?? 0, 'num')}
  </tr>`;
}

function summaryCard(batch: BatchData): SafeHtml {
  const counts = batch.counts;
  return html`<section class="card" aria-labelledby="batch-summary-title">
    <h2 id="batch-summary-title">Summary</h2>
    <dl class="details">
      <div data-field="status"><dt>Status</dt><dd>${badge(BATCH_BADGE[batch.status], batch.status)}</dd></div>
      <div data-field="created"><dt>Created</dt><dd>${time(Date.parse(batch.createdAt))}</dd></div>
      <div data-field="finished"><dt>Finished</dt><dd>${time(batch.finishedAt ? Date.parse(batch.finishedAt) : null)}</dd></div>
      <div data-field="items"><dt>Items</dt><dd>${batch.total}: ${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.queued} queued, ${counts.running} running, ${counts.cancelled} cancelled</dd></div>
      <div data-field="credits"><dt>Credits</dt><dd>${batch.creditsCharged} <span class="muted">each item is charged on its own success</span></dd></div>
    </dl>
  </section>`;
}

/** One batch of POST /captures/bulk: its items (status, error, file, credits), Cancel while it runs, and its webhook's deliveries. */
export function batchPage(view: BatchPageView): SafeHtml {
  const { ctx, batch } = view;
  const open = batch.status === 'queued' || batch.status === 'running';
  const cancel =
    open && view.canAct ? postButton(ctx, `${batchHref(batch.batchId)}/cancel`, 'Cancel batch', 'button button-danger-ghost') : '';
  const body = html`${pageHeading('Batch', html`<code class="job-id">${batch.batchId}</code>`, cancel)}
  ${flashBanner(ctx.flash)}
  <div class="stack">
    ${summaryCard(batch)}
    <section class="card card-flush" aria-labelledby="batch-items-title">
      <div class="card-header"><h2 id="batch-items-title">Items</h2><span class="muted">${batch.total} jobs</span></div>
      <div class="table-wrap"><table class="table stack-table" id="batch-items">
        <thead><tr>
          <th scope="col" class="num">#</th><th scope="col">Job</th><th scope="col">Status</th><th scope="col">Error</th>
          <th scope="col">File</th><th scope="col" class="num">Credits</th>
        </tr></thead>
        <tbody>${batch.items.map((item) => itemRow(item, view.credits.get(item.index)))}</tbody>
      </table></div>
    </section>
    ${webhookEventsCard(ctx, {
      events: view.events,
      hasWebhook: view.hasWebhook,
      canResend: view.canAct,
      pending: 'The batch webhook is sent when every item has ended, or when the batch is cancelled.',
    })}
  </div>`;
  return page({ title: `Batch ${batch.batchId.slice(0, 8)}`, body, assets: view.assets, ctx, section: 'batches' });
}

import type { BatchData } from '@daguerre/contract';
import { html, type SafeHtml } from '../html.js';
import type { DashboardContext } from '../session.js';
import { time } from './format.js';
import { badge, emptyState, page, pageHeading, type Assets } from './layout.js';
import { batchHref } from './job-views.js';

const STATUS_BADGE: Record<BatchData['status'], 'ok' | 'warn' | 'bad' | 'neutral' | 'accent'> = {
  queued: 'neutral',
  running: 'accent',
  completed: 'ok',
  cancelled: 'warn',
};

function batchesTable(batches: BatchData[]): SafeHtml {
  return html`<div class="table-wrap"><table class="table" id="batches-table">
    <thead><tr>
      <th scope="col">Created</th><th scope="col">Batch</th><th scope="col">Status</th><th scope="col" class="num">Items</th>
      <th scope="col" class="num">Succeeded</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Queued</th>
      <th scope="col" class="num">Running</th><th scope="col" class="num">Cancelled</th><th scope="col" class="num">Credits</th>
    </tr></thead>
    <tbody>${batches.map(
      (batch) => html`<tr data-batch-id="${batch.batchId}">
        <td>${time(Date.parse(batch.createdAt))}</td>
        <td><a href="${batchHref(batch.batchId)}"><code>${batch.batchId}</code></a></td>
        <td>${badge(STATUS_BADGE[batch.status], batch.status)}</td>
        <td class="num">${batch.total}</td>
        <td class="num">${batch.counts.succeeded}</td>
        <td class="num">${batch.counts.failed}</td>
        <td class="num">${batch.counts.queued}</td>
        <td class="num">${batch.counts.running}</td>
        <td class="num">${batch.counts.cancelled}</td>
        <td class="num">${batch.creditsCharged}</td>
      </tr>`,
    )}</tbody>
  </table></div>`;
}

/** The organization's latest batches of POST /captures/bulk (docs/bulk.md), with their counts. */
export function batchesPage(ctx: DashboardContext, assets: Assets, batches: BatchData[]): SafeHtml {
  const body = html`${pageHeading('Batches', 'Bulk captures sent with POST /captures/bulk: each item is an async job, charged on its own success.')}
  <section class="card card-flush" aria-labelledby="batches-title">
    <div class="card-header"><h2 id="batches-title">Latest batches</h2><span class="muted">last ${batches.length || 'none'}</span></div>
    ${
      batches.length
        ? batchesTable(batches)
        : emptyState(
            'No batches yet',
            html`Send many captures at once with <code>POST /captures/bulk</code> (or <code>captureBulk()</code> in the SDK).`,
          )
    }
  </section>`;
  return page({ title: 'Batches', body, assets, ctx, section: 'batches' });
}

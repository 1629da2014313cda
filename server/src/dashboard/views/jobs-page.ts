import type { JobRecord } from '../../store/job-record.js';
import { html, type SafeHtml } from '../html.js';
import type { DashboardContext } from '../session.js';
import { time } from './format.js';
import { batchLink, cell, jobLink, jobStatusBadge, jobTarget, shownStatus } from './job-views.js';
import { alert, emptyState, page, pageHeading, type Assets } from './layout.js';

export interface JobRow {
  job: JobRecord;
  /** The batch it is an item of, if any. */
  batchId: string | undefined;
}

function jobsTable(rows: JobRow[]): SafeHtml {
  return html`<div class="table-wrap"><table class="table stack-table" id="jobs-table">
    <thead><tr>
      <th scope="col">Created</th><th scope="col">Job</th><th scope="col">Status</th><th scope="col">Format</th>
      <th scope="col">Target</th><th scope="col">Batch</th><th scope="col" class="num">Credits</th>
    </tr></thead>
    <tbody>${rows.map(({ job, batchId }) => {
      const { target, format } = jobTarget(job.payload);
      return html`<tr data-job-id="${job.id}">
        ${cell('Created', time(job.createdAt))}
        ${cell('Job', jobLink(job.id))}
        ${cell('Status', jobStatusBadge(shownStatus(job)))}
        ${cell('Format', html`<span class="format">${format}</span>`)}
        ${cell('Target', html`<span class="job-target" title="${target}">${target}</span>`, 'truncate')}
        ${cell('Batch', batchId ? batchLink(batchId) : html`<span class="muted">—</span>`)}
        ${cell('Credits', job.creditsCharged, 'num')}
      </tr>`;
    })}</tbody>
  </table></div>`;
}

/** The organization's latest async jobs (POST /captures, and the items of batches), newest first. */
export function jobsPage(ctx: DashboardContext, assets: Assets, rows: JobRow[], options: { queueAvailable: boolean }): SafeHtml {
  const body = html`${pageHeading('Jobs', 'Async captures sent with POST /captures or as items of a batch: their state, file, charge and webhook.')}
  ${options.queueAvailable ? '' : alert('info', html`This server runs without <code>REDIS_URL</code>: async jobs cannot be sent, cancelled or their webhooks sent again.`)}
  <section class="card card-flush" aria-labelledby="jobs-title">
    <div class="card-header"><h2 id="jobs-title">Latest jobs</h2><span class="muted">last ${rows.length || 'none'}</span></div>
    ${
      rows.length
        ? jobsTable(rows)
        : emptyState(
            'No jobs yet',
            html`Queue a capture with <code>POST /captures</code> (or <code>captureAsync()</code> in the SDK); it is kept here until its result expires.`,
          )
    }
  </section>`;
  return page({ title: 'Jobs', body, assets, ctx, section: 'jobs' });
}

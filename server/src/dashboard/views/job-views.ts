import { CANCELLED_CODE, type BatchItemStatus } from '@daguerre/contract';
import { redactUrl } from '../../security/redaction.js';
import type { JobRecord } from '../../store/job-record.js';
import { html, type HtmlValue, type SafeHtml } from '../html.js';
import { DASHBOARD_PATH } from '../session.js';
import { formatBytes } from './format.js';
import { badge } from './layout.js';

/** What the dashboard calls a job's state: a job cancelled (by DELETE or with its batch) is failed with code CANCELLED. */
export type ShownJobStatus = BatchItemStatus;

const STATUS_BADGE: Record<ShownJobStatus, 'ok' | 'warn' | 'bad' | 'neutral' | 'accent'> = {
  queued: 'neutral',
  active: 'accent',
  succeeded: 'ok',
  failed: 'bad',
  cancelled: 'warn',
  expired: 'neutral',
};

export function shownStatus(job: Pick<JobRecord, 'status' | 'error'>): ShownJobStatus {
  return job.status === 'failed' && job.error?.code === CANCELLED_CODE ? 'cancelled' : job.status;
}

export function jobStatusBadge(status: ShownJobStatus): SafeHtml {
  return badge(STATUS_BADGE[status], status);
}

export const jobHref = (jobId: string) => `${DASHBOARD_PATH}/jobs/${jobId}`;
export const jobFileHref = (jobId: string) => `${DASHBOARD_PATH}/jobs/${jobId}/file`;
export const batchHref = (batchId: string) => `${DASHBOARD_PATH}/batches/${batchId}`;

/** A job id as a link to its page: the id's first block is enough to tell jobs apart at a glance. */
export function jobLink(jobId: string): SafeHtml {
  return html`<a href="${jobHref(jobId)}" class="mono" title="${jobId}">${jobId.slice(0, 8)}…</a>`;
}

export function batchLink(batchId: string): SafeHtml {
  return html`<a href="${batchHref(batchId)}" class="mono" title="${batchId}">${batchId.slice(0, 8)}…</a>`;
}

/** What was captured and how, from the job's stored payload (which holds no secret). */
export interface JobTarget {
  /** The URL with secret-looking query values masked as the logs mask them, or a description of inline HTML. */
  target: string;
  format: string;
}

export function jobTarget(payload: string): JobTarget {
  try {
    const options = (JSON.parse(payload) as { options?: { url?: unknown; html?: unknown; format?: unknown } }).options ?? {};
    const format = typeof options.format === 'string' ? options.format : 'png';
    if (typeof options.url === 'string') return { target: redactUrl(options.url), format };
    if (typeof options.html === 'string') return { target: `Inline HTML (${formatBytes(Buffer.byteLength(options.html))})`, format };
    return { target: '—', format };
  } catch {
    return { target: '—', format: '—' };
  }
}

/**
 * A table cell that says what it holds when the table is stacked into cards on a narrow screen.
 * Its content is one element, so the stacked cell lays out two things: the label and the value.
 */
export function cell(label: string, content: HtmlValue, className = ''): SafeHtml {
  return html`<td data-label="${label}"${className ? html` class="${className}"` : ''}><span class="cell-value">${content}</span></td>`;
}

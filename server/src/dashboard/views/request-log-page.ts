import { LOGGED_CAPTURE_STATUSES, type LoggedCapture, type LoggedCaptureStatus } from '@daguerre/contract';
import type { ApiKeyRow } from '../../store/api-key-repository.js';
import { html, type SafeHtml } from '../html.js';
import { DASHBOARD_PATH, type DashboardContext } from '../session.js';
import { formatBytes, formatDuration, plural, time } from './format.js';
import { alert, badge, emptyState, page, pageHeading, type Assets } from './layout.js';

/** The filters as the page's form holds them (dates as typed, YYYY-MM-DD). */
export interface LogFilterForm {
  status: string;
  keyId: string;
  from: string;
  to: string;
}

export interface RequestLogView {
  ctx: DashboardContext;
  assets: Assets;
  form: LogFilterForm;
  /** Why the filters could not be used, when they could not. */
  problem?: string;
  captures: LoggedCapture[];
  /** The address of the next (older) page, when there is one. */
  olderHref?: string;
  /** Whether this is a page after the first (a link back to the newest is shown). */
  paged: boolean;
  csvHref: string;
  keys: ApiKeyRow[];
  retentionDays: number;
}

const STATUS_BADGE: Record<LoggedCaptureStatus, { kind: 'ok' | 'warn' | 'bad' | 'neutral' | 'accent'; label: string }> = {
  running: { kind: 'accent', label: 'Running' },
  succeeded: { kind: 'ok', label: 'Succeeded' },
  cached: { kind: 'neutral', label: 'Cache hit' },
  failed: { kind: 'bad', label: 'Failed' },
  refused: { kind: 'warn', label: 'Refused' },
};

const KIND_LABEL: Record<LoggedCapture['kind'], string> = {
  sync: 'GET/POST /capture',
  async: 'async job (POST /captures)',
  batch: 'batch item (POST /captures/bulk)',
  mcp: 'MCP tool',
  monitor: 'monitor run',
};

function keyLabel(capture: LoggedCapture, keys: Map<string, ApiKeyRow>): SafeHtml {
  if (!capture.keyId) return html`<span class="muted">—</span>`;
  const key = keys.get(capture.keyId);
  if (!key) return html`<span class="muted">deleted key</span>`;
  return html`${key.name} <code class="muted">${key.prefix}…</code>`;
}

function filterForm(view: RequestLogView): SafeHtml {
  const { form } = view;
  return html`<form method="get" action="${DASHBOARD_PATH}/log" class="log-filters" aria-label="Filter the request log">
    <div class="field">
      <label for="log-status">Outcome</label>
      <select id="log-status" name="status">
        <option value="">All</option>
        ${LOGGED_CAPTURE_STATUSES.map((status) => html`<option value="${status}" ${form.status === status ? 'selected' : ''}>${STATUS_BADGE[status].label}</option>`)}
      </select>
    </div>
    <div class="field">
      <label for="log-key">API key</label>
      <select id="log-key" name="keyId">
        <option value="">All keys</option>
        ${view.keys.map(
          (key) =>
            html`<option value="${key.id}" ${form.keyId === key.id ? 'selected' : ''}>${key.name} (${key.prefix}…)${key.revoked_at ? ' · revoked' : ''}</option>`,
        )}
      </select>
    </div>
    <div class="field">
      <label for="log-from">From <span class="optional">(UTC)</span></label>
      <input id="log-from" name="from" type="date" value="${form.from}">
    </div>
    <div class="field">
      <label for="log-to">To <span class="optional">(UTC, inclusive)</span></label>
      <input id="log-to" name="to" type="date" value="${form.to}">
    </div>
    <div class="log-filter-actions">
      <button type="submit" class="button button-primary">Show</button>
      <a class="button button-ghost" href="${DASHBOARD_PATH}/log">Reset</a>
    </div>
  </form>`;
}

function logTable(view: RequestLogView): SafeHtml {
  const keys = new Map(view.keys.map((key) => [key.id, key]));
  return html`<div class="table-wrap"><table class="table log-table" id="log-table">
    <thead><tr>
      <th scope="col">Time</th><th scope="col">Target</th><th scope="col">Format</th><th scope="col">Outcome</th>
      <th scope="col" class="num">Credits</th><th scope="col" class="num">Duration</th><th scope="col">Key</th>
    </tr></thead>
    <tbody>${view.captures.map((capture) => {
      const status = STATUS_BADGE[capture.status];
      return html`<tr data-request-id="${capture.requestId}" data-status="${capture.status}">
        <td class="log-time">${time(Date.parse(capture.createdAt))}<br><code class="request-id" title="X-Request-Id">${capture.requestId}</code></td>
        <td class="log-target">${capture.target === null ? html`<span class="muted">inline HTML</span>` : html`<span class="log-url">${capture.target}</span>`}
          ${capture.jobId ? html`<br><a class="muted" href="${DASHBOARD_PATH}/jobs/${capture.jobId}">job ${capture.jobId.slice(0, 8)}…</a>` : ''}</td>
        <td><span class="format">${capture.format.toUpperCase()}</span><br><span class="muted" title="${KIND_LABEL[capture.kind]}">${capture.kind}</span></td>
        <td>${badge(status.kind, status.label)}${capture.httpStatus ? html` <span class="muted">${capture.httpStatus}</span>` : ''}
          ${capture.errorCode ? html`<br><code class="error-code">${capture.errorCode}</code>` : ''}</td>
        <td class="num">${capture.credits}</td>
        <td class="num">${formatDuration(capture.durationMs)}${capture.fileSize !== null ? html`<br><span class="muted">${formatBytes(capture.fileSize)}</span>` : ''}</td>
        <td class="log-key">${keyLabel(capture, keys)}</td>
      </tr>`;
    })}</tbody>
  </table></div>`;
}

/** `/dashboard/log`: every capture of the organization, newest first, filtered and paged; CSV of the same filters. */
export function requestLogPage(view: RequestLogView): SafeHtml {
  const body = html`${pageHeading(
    'Request log',
    html`Every capture of your organization — from your code, async jobs, batches, MCP tools and monitors — with what it was
      answered and what it cost. Kept for ${plural(view.retentionDays, 'day')}. Secret query values are masked as
      <code>[REDACTED]</code>; inline HTML is never kept.`,
    html`<a class="button" href="${view.csvHref}" download>Download CSV</a>`,
  )}
  <section class="card" aria-label="Filters">${filterForm(view)}</section>
  ${view.problem ? alert('error', view.problem, 'These filters cannot be used.') : ''}
  <section class="card card-flush" aria-labelledby="log-title">
    <div class="card-header"><h2 id="log-title">${view.paged ? 'Older captures' : 'Latest captures'}</h2><span class="muted">${plural(view.captures.length, 'capture')} on this page</span></div>
    ${
      view.captures.length
        ? logTable(view)
        : emptyState(
            'No captures match',
            html`Captures appear here as they are made. Change the filters, or make one in the <a href="${DASHBOARD_PATH}/playground">Playground</a>.`,
          )
    }
    <nav class="pager" aria-label="Pages of the log">
      ${view.paged ? html`<a href="${DASHBOARD_PATH}/log?${new URLSearchParams(filterParams(view.form)).toString()}">← Newest</a>` : ''}
      ${view.olderHref ? html`<a href="${view.olderHref}" rel="next">Older →</a>` : ''}
    </nav>
  </section>`;
  return page({ title: 'Request log', body, assets: view.assets, ctx: view.ctx, section: 'log' });
}

/** The form's non-empty fields, for links that keep the filters. */
export function filterParams(form: LogFilterForm): Record<string, string> {
  return Object.fromEntries(Object.entries(form).filter(([, value]) => value !== ''));
}

import type { Monitor } from '@daguerre/contract';
import type { ApiKeyRow } from '../../store/api-key-repository.js';
import { html, type SafeHtml } from '../html.js';
import type { DashboardContext } from '../session.js';
import { time } from './format.js';
import { cell } from './job-views.js';
import { alert, csrfField, emptyState, flashBanner, page, pageHeading, type Assets } from './layout.js';
import {
  diffBadge,
  epoch,
  formatInterval,
  formatPercent,
  monitorHref,
  monitorsHref,
  monitorStateBadge,
  runStatusBadge,
  shownUrl,
  textChanges,
} from './monitor-views.js';

/** The create form as typed (re-shown with its errors when the service refused it). */
export interface MonitorForm {
  url: string;
  name: string;
  intervalSeconds: string;
  threshold: string;
  ignoreSelectors: string;
  webhookUrl: string;
  keyId: string;
}

export type MonitorFormErrors = Partial<Record<keyof MonitorForm | 'form', string>>;

export interface MonitorsView {
  ctx: DashboardContext;
  assets: Assets;
  monitors: Monitor[];
  /** Active keys: a monitor's webhooks are signed with the signing secret of the key it belongs to. */
  keys: ApiKeyRow[];
  /** MONITOR_MIN_INTERVAL_SECONDS. */
  minIntervalSeconds: number;
  /** Whether monitors can run here (they need REDIS_URL). */
  available: boolean;
  form?: MonitorForm;
  errors?: MonitorFormErrors;
}

export const emptyMonitorForm = (minIntervalSeconds: number): MonitorForm => ({
  url: '',
  name: '',
  intervalSeconds: String(Math.max(minIntervalSeconds, 3600)),
  threshold: '1',
  ignoreSelectors: '',
  webhookUrl: '',
  keyId: '',
});

function lastRunCell(monitor: Monitor): SafeHtml {
  const run = monitor.lastRun;
  if (!run) return html`<span class="muted">none yet</span>`;
  return html`<span class="monitor-last-run">${time(epoch(run.startedAt))} ${run.status === 'succeeded' ? diffBadge(run.diff, run) : runStatusBadge(run)} ${textChanges(run.diff)}</span>`;
}

function monitorsTable(monitors: Monitor[]): SafeHtml {
  return html`<div class="table-wrap"><table class="table stack-table" id="monitors-table">
    <thead><tr>
      <th scope="col">Name</th><th scope="col">URL</th><th scope="col">Interval</th><th scope="col" class="num">Threshold</th>
      <th scope="col">Status</th><th scope="col">Last run</th><th scope="col">Next run</th>
    </tr></thead>
    <tbody>${monitors.map(
      (monitor) => html`<tr data-monitor-id="${monitor.monitorId}">
        ${cell('Name', html`<a href="${monitorHref(monitor.monitorId)}" class="monitor-name" title="${monitor.name}">${monitor.name}</a>`, 'wrap')}
        ${cell('URL', html`<span class="monitor-url" title="${shownUrl(monitor.url)}">${shownUrl(monitor.url)}</span>`, 'truncate')}
        ${cell('Interval', formatInterval(monitor.intervalSeconds))}
        ${cell('Threshold', formatPercent(monitor.threshold), 'num')}
        ${cell('Status', monitorStateBadge(monitor), 'monitor-state')}
        ${cell('Last run', lastRunCell(monitor), 'wrap')}
        ${cell('Next run', time(epoch(monitor.nextRunAt), 'datetime', monitor.paused ? 'paused' : '—'))}
      </tr>`,
    )}</tbody>
  </table></div>`;
}

const fieldError = (id: string, error: string | undefined) => (error ? html`<p class="field-error" id="${id}-error">${error}</p>` : '');
const describedBy = (id: string, error: string | undefined, help = true) =>
  html`aria-describedby="${[help ? `${id}-help` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ')}" ${error ? html`aria-invalid="true"` : ''}`;

function createForm(view: MonitorsView): SafeHtml {
  const form = view.form ?? emptyMonitorForm(view.minIntervalSeconds);
  const errors = view.errors ?? {};
  const anyError = Object.values(errors).some(Boolean);
  return html`<section class="card" aria-labelledby="create-monitor-title">
    <h2 id="create-monitor-title">Watch a page</h2>
    ${anyError ? alert('error', errors.form ?? 'The monitor was not created: please correct the highlighted fields.') : ''}
    <form method="post" action="${monitorsHref}" class="monitor-form" novalidate>
      ${csrfField(view.ctx)}
      <div class="field monitor-field-wide ${errors.url ? 'has-error' : ''}">
        <label for="monitor-url">URL</label>
        <input id="monitor-url" name="url" type="url" required value="${form.url}" placeholder="https://example.com/pricing" spellcheck="false" ${describedBy('monitor-url', errors.url)}>
        <p class="hint" id="monitor-url-help">The page to capture on a schedule and compare with its baseline.</p>
        ${fieldError('monitor-url', errors.url)}
      </div>
      <div class="field ${errors.name ? 'has-error' : ''}">
        <label for="monitor-name">Name <span class="optional">(optional)</span></label>
        <input id="monitor-name" name="name" type="text" maxlength="200" value="${form.name}" placeholder="Pricing page" ${describedBy('monitor-name', errors.name)}>
        <p class="hint" id="monitor-name-help">Default: the URL.</p>
        ${fieldError('monitor-name', errors.name)}
      </div>
      <div class="field ${errors.intervalSeconds ? 'has-error' : ''}">
        <label for="monitor-interval">Interval (seconds)</label>
        <input id="monitor-interval" name="intervalSeconds" type="number" required min="${view.minIntervalSeconds}" step="1" value="${form.intervalSeconds}" ${describedBy('monitor-interval', errors.intervalSeconds)}>
        <p class="hint" id="monitor-interval-help">At least ${view.minIntervalSeconds} (this server's minimum). 3600 is hourly.</p>
        ${fieldError('monitor-interval', errors.intervalSeconds)}
      </div>
      <div class="field ${errors.threshold ? 'has-error' : ''}">
        <label for="monitor-threshold">Threshold (% of pixels)</label>
        <input id="monitor-threshold" name="threshold" type="number" required min="0" max="100" step="any" value="${form.threshold}" ${describedBy('monitor-threshold', errors.threshold)}>
        <p class="hint" id="monitor-threshold-help">A run that changes this share of the pixels or more counts as a change and is sent to the webhook.</p>
        ${fieldError('monitor-threshold', errors.threshold)}
      </div>
      <div class="field ${errors.ignoreSelectors ? 'has-error' : ''}">
        <label for="monitor-ignore">Ignore <span class="optional">(optional)</span></label>
        <textarea id="monitor-ignore" name="ignoreSelectors" rows="3" class="mono" spellcheck="false" placeholder=".ad-slot&#10;#clock" ${describedBy('monitor-ignore', errors.ignoreSelectors)}>${form.ignoreSelectors}</textarea>
        <p class="hint" id="monitor-ignore-help">CSS selectors, one a line, of regions whose changes never count.</p>
        ${fieldError('monitor-ignore', errors.ignoreSelectors)}
      </div>
      <div class="field ${errors.webhookUrl ? 'has-error' : ''}">
        <label for="monitor-webhook">Webhook URL <span class="optional">(optional)</span></label>
        <input id="monitor-webhook" name="webhookUrl" type="url" value="${form.webhookUrl}" placeholder="https://hooks.example.com/daguerre" spellcheck="false" ${describedBy('monitor-webhook', errors.webhookUrl)}>
        <p class="hint" id="monitor-webhook-help">Receives monitor.changed and monitor.failed, signed with the key below.</p>
        ${fieldError('monitor-webhook', errors.webhookUrl)}
      </div>
      <div class="field ${errors.keyId ? 'has-error' : ''}">
        <label for="monitor-key">API key</label>
        <select id="monitor-key" name="keyId" ${describedBy('monitor-key', errors.keyId)}>
          ${view.keys.map((key) => html`<option value="${key.id}" ${key.id === form.keyId ? 'selected' : ''}>${key.name} (${key.prefix}…)</option>`)}
        </select>
        <p class="hint" id="monitor-key-help">Its signing secret signs the webhooks; the runs are charged to the organization.</p>
        ${fieldError('monitor-key', errors.keyId)}
      </div>
      <div class="form-actions monitor-field-wide">
        <button type="submit" class="button button-primary" ${view.available && view.keys.length > 0 ? '' : 'disabled'}>Create monitor</button>
        ${view.keys.length === 0 ? html`<span class="hint">Create an API key first: a monitor's webhooks are signed with one.</span>` : ''}
      </div>
    </form>
  </section>`;
}

/** The organization's monitors, each with its state and last run, and the form to watch another page. */
export function monitorsPage(view: MonitorsView): SafeHtml {
  const body = html`${pageHeading(
    'Monitors',
    'Pages captured on a schedule and compared with their baseline, in pixels and in words: a webhook when one changed past its threshold.',
  )}
  ${flashBanner(view.ctx.flash)}
  ${view.available ? '' : alert('info', html`This server runs without <code>REDIS_URL</code>: monitors cannot run or be created here.`)}
  <section class="card card-flush" aria-labelledby="monitors-title">
    <div class="card-header"><h2 id="monitors-title">Monitors</h2><span class="muted">${view.monitors.length || 'none'}</span></div>
    ${
      view.monitors.length
        ? monitorsTable(view.monitors)
        : emptyState(
            'No monitors yet',
            html`Watch a page with the form below, <code>POST /monitors</code> or <code>createMonitor()</code> in the SDK.`,
          )
    }
  </section>
  ${createForm(view)}`;
  return page({ title: 'Monitors', body, assets: view.assets, ctx: view.ctx, section: 'monitors' });
}

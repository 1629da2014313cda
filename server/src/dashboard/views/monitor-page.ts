import type { Monitor, MonitorRun } from '@daguerre/contract';
import { html, type HtmlValue, type SafeHtml } from '../html.js';
import type { DashboardContext } from '../session.js';
import { time } from './format.js';
import { badge, csrfField, emptyState, flashBanner, page, pageHeading, postButton, type Assets } from './layout.js';
import {
  diffBadge,
  epoch,
  formatInterval,
  formatPercent,
  monitorHref,
  monitorStateBadge,
  runHref,
  runImageHref,
  runStatusBadge,
  shownUrl,
  textChanges,
} from './monitor-views.js';

export interface MonitorPageView {
  ctx: DashboardContext;
  assets: Assets;
  monitor: Monitor;
  runs: MonitorRun[];
  /** The address of the next (older) page of runs, when there is one. */
  olderHref?: string;
  /** Whether this is a page of runs after the first. */
  paged: boolean;
  /** The name of the key whose signing secret signs its webhooks, when it still exists. */
  keyName: string | undefined;
}

const row = (label: string, value: HtmlValue, name: string) => html`<div data-field="${name}"><dt>${label}</dt><dd>${value}</dd></div>`;
const none = (text = 'none') => html`<span class="muted">${text}</span>`;

function settingsCard(view: MonitorPageView): SafeHtml {
  const { monitor } = view;
  const options = Object.entries(monitor.options);
  return html`<section class="card" aria-labelledby="monitor-settings-title">
    <h2 id="monitor-settings-title">Settings</h2>
    <dl class="details monitor-settings">
      ${row('Status', html`${monitorStateBadge(monitor)}${monitor.pausedReason === 'credits' ? html` <span class="muted">resumes by itself when credits return</span>` : ''}`, 'status')}
      ${row('URL', html`<code class="monitor-break">${shownUrl(monitor.url)}</code>`, 'url')}
      ${row('Interval', `${formatInterval(monitor.intervalSeconds)} (${monitor.intervalSeconds} s)`, 'interval')}
      ${row('Threshold', `${formatPercent(monitor.threshold)} of the pixels`, 'threshold')}
      ${row('Next run', time(epoch(monitor.nextRunAt), 'datetime', monitor.paused ? 'paused' : '—'), 'next-run')}
      ${row('Webhook', monitor.webhookUrl ? html`<code class="monitor-break">${shownUrl(monitor.webhookUrl)}</code>` : none(), 'webhook')}
      ${row('Signed with', view.keyName ?? none('a deleted key'), 'key')}
      ${row(
        'Ignored regions',
        monitor.ignoreSelectors.length
          ? html`<span class="monitor-selectors">${monitor.ignoreSelectors.map((s) => html`<code>${s}</code> `)}</span>`
          : none(),
        'ignore',
      )}
      ${row(
        'Capture options',
        options.length
          ? html`<span class="monitor-selectors">${options.map(([name, value]) => html`<code>${name}=${typeof value === 'string' ? value : JSON.stringify(value)}</code> `)}</span>`
          : none('defaults'),
        'options',
      )}
      ${row('Baseline', monitor.goldenRunId ? html`<a href="${runHref(monitor.monitorId, monitor.goldenRunId)}">the golden run</a>` : 'the run before each run', 'baseline')}
      ${row('Created', time(epoch(monitor.createdAt)), 'created')}
    </dl>
  </section>`;
}

function runCard(view: MonitorPageView, run: MonitorRun): SafeHtml {
  const { ctx, monitor } = view;
  const href = runHref(monitor.monitorId, run.runId);
  const canPin = run.status === 'succeeded' && !run.golden;
  return html`<li class="monitor-run" data-run-id="${run.runId}" data-status="${run.status}">
    <a class="monitor-thumb" href="${href}" aria-label="Run of ${new Date(run.startedAt).toUTCString()}">
      ${
        run.imageUrl
          ? html`<img src="${runImageHref(monitor.monitorId, run.runId)}" alt="" loading="lazy" decoding="async">`
          : html`<span class="monitor-thumb-empty">${run.status === 'running' ? 'Running…' : 'No capture'}</span>`
      }
    </a>
    <div class="monitor-run-meta">
      <a href="${href}" class="monitor-run-time">${time(epoch(run.startedAt))}</a>
      <div class="monitor-run-badges">
        ${run.status === 'succeeded' ? diffBadge(run.diff, run) : runStatusBadge(run)}
        ${run.golden ? badge('accent', 'Golden') : ''}
        ${textChanges(run.diff)}
      </div>
      ${run.error ? html`<p class="monitor-run-error"><code class="error-code">${run.error.code}</code></p>` : ''}
      ${canPin ? postButton(ctx, `${href}/golden`, 'Pin as golden', 'button button-small button-ghost') : ''}
    </div>
  </li>`;
}

function timelineCard(view: MonitorPageView): SafeHtml {
  const { monitor, runs } = view;
  return html`<section class="card" aria-labelledby="monitor-runs-title">
    <div class="monitor-card-header"><h2 id="monitor-runs-title">Runs</h2><span class="muted">newest first</span></div>
    ${
      runs.length
        ? html`<ol class="monitor-timeline" id="monitor-timeline">${runs.map((run) => runCard(view, run))}</ol>`
        : emptyState(
            'No runs yet',
            monitor.paused ? 'The monitor is paused: resume it to run it.' : 'The first run starts at once; reload in a moment.',
          )
    }
    ${
      view.paged || view.olderHref
        ? html`<nav class="pager" aria-label="Pages of runs">
            ${view.paged ? html`<a href="${monitorHref(monitor.monitorId)}">← Newest</a>` : ''}
            ${view.olderHref ? html`<a href="${view.olderHref}" rel="next">Older →</a>` : ''}
          </nav>`
        : ''
    }
  </section>`;
}

/** One monitor: its settings, Pause/Resume and Delete, and its runs as a timeline of thumbnails. */
export function monitorPage(view: MonitorPageView): SafeHtml {
  const { ctx, monitor } = view;
  const href = monitorHref(monitor.monitorId);
  const actions = html`<div class="button-row">
    ${
      monitor.paused
        ? postButton(ctx, `${href}/resume`, 'Resume', 'button button-primary')
        : postButton(ctx, `${href}/pause`, 'Pause', 'button')
    }
    <a class="button button-danger-ghost" href="${href}/delete">Delete</a>
  </div>`;
  const body = html`${pageHeading(monitor.name, html`<span class="monitor-break">${shownUrl(monitor.url)}</span>`, actions)}
  ${flashBanner(ctx.flash)}
  <div class="stack">
    ${settingsCard(view)}
    ${timelineCard(view)}
  </div>`;
  return page({ title: `Monitor ${monitor.name}`, body, assets: view.assets, ctx, section: 'monitors' });
}

export function deleteMonitorPage(ctx: DashboardContext, assets: Assets, monitor: Monitor): SafeHtml {
  const href = monitorHref(monitor.monitorId);
  const body = html`${pageHeading('Delete monitor')}
  <section class="card confirm-card" aria-labelledby="delete-monitor-title">
    <h2 id="delete-monitor-title">Delete “${monitor.name}”?</h2>
    <p>It stops at once, and its runs and their images are deleted. This cannot be undone; pause it instead to keep them.</p>
    <div class="button-row">
      <form method="post" action="${href}/delete" class="inline-form">
        ${csrfField(ctx)}
        <button type="submit" class="button button-danger">Delete monitor</button>
      </form>
      <a class="button" href="${href}">Cancel</a>
    </div>
  </section>`;
  return page({ title: 'Delete monitor', body, assets, ctx, section: 'monitors' });
}

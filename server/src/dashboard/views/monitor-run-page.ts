import type { CaptureDiff, Monitor, MonitorRun } from '@daguerre/contract';
import { html, trusted, type HtmlValue, type SafeHtml } from '../html.js';
import type { DashboardContext } from '../session.js';
import { formatDuration, formatNumber, time } from './format.js';
import { alert, badge, emptyState, flashBanner, page, pageHeading, postButton, type Assets } from './layout.js';
import { diffBadge, epoch, formatPercent, monitorHref, runDiffHref, runHref, runImageHref, runStatusBadge } from './monitor-views.js';

export interface MonitorRunPageView {
  ctx: DashboardContext;
  assets: Assets;
  monitor: Monitor;
  run: MonitorRun;
  /** The run it was compared with, when it is still kept. */
  baseline: MonitorRun | undefined;
}

const row = (label: string, value: HtmlValue, name: string) => html`<div data-field="${name}"><dt>${label}</dt><dd>${value}</dd></div>`;

function detailsCard(view: MonitorRunPageView): SafeHtml {
  const { run, monitor } = view;
  const diff = run.diff;
  return html`<section class="card" aria-labelledby="run-details-title">
    <h2 id="run-details-title">Run</h2>
    <dl class="details">
      ${row('Status', html`${runStatusBadge(run)} ${run.golden ? badge('accent', 'Golden') : ''}`, 'status')}
      ${row('Started', time(epoch(run.startedAt)), 'started')}
      ${row('Took', formatDuration(run.loadMs), 'took')}
      ${row('HTTP status', run.targetStatus === null ? html`<span class="muted">—</span>` : String(run.targetStatus), 'target-status')}
      ${row('Credits', String(run.credits), 'credits')}
      ${
        diff
          ? row(
              'Changed',
              html`${diffBadge(diff, run)} <span class="muted">${formatNumber(diff.changedPixels)} of ${formatNumber(diff.width * diff.height)} pixels, threshold ${formatPercent(diff.threshold)}</span>`,
              'diff',
            )
          : row(
              'Changed',
              html`<span class="muted">${run.status === 'succeeded' ? 'first run: nothing to compare with' : '—'}</span>`,
              'diff',
            )
      }
      ${row(
        'Baseline',
        run.baselineRunId
          ? html`<a href="${runHref(monitor.monitorId, run.baselineRunId)}">${view.baseline ? time(epoch(view.baseline.startedAt)) : 'an earlier run'}</a>${view.baseline?.golden ? html` ${badge('accent', 'Golden')}` : ''}`
          : html`<span class="muted">none</span>`,
        'baseline',
      )}
      ${run.error ? row('Error', html`<code class="error-code">${run.error.code}</code> ${run.error.message}`, 'error') : ''}
    </dl>
  </section>`;
}

/** The changed regions as outlines over the capture: an SVG in the capture's pixels (no inline style, so the CSP holds). */
function regionsLayer(diff: CaptureDiff): SafeHtml {
  const rects = diff.regions
    .map((r) => `<rect x="${r.x}" y="${r.y}" width="${Math.max(r.width, 1)}" height="${Math.max(r.height, 1)}"/>`)
    .join('');
  return trusted(
    `<svg class="compare-regions" viewBox="0 0 ${Math.max(diff.width, 1)} ${Math.max(diff.height, 1)}" preserveAspectRatio="none" aria-hidden="true" focusable="false">${rects}</svg>`,
  );
}

function figure(caption: HtmlValue, src: string | undefined, alt: string, name: string): SafeHtml {
  return html`<figure class="compare-figure" data-image="${name}">
    <figcaption>${caption}</figcaption>
    ${src ? html`<a href="${src}" class="compare-image"><img src="${src}" alt="${alt}"></a>` : html`<div class="compare-missing">${alt}: not kept</div>`}
  </figure>`;
}

function compareCard(view: MonitorRunPageView): SafeHtml {
  const { monitor, run } = view;
  const id = monitor.monitorId;
  const newSrc = run.imageUrl ? runImageHref(id, run.runId) : undefined;
  if (!newSrc) return html``;
  const diff = run.diff;
  const baselineSrc = run.baselineRunId && view.baseline?.imageUrl ? runImageHref(id, run.baselineRunId) : undefined;
  if (!run.baselineRunId || !diff)
    return html`<section class="card" aria-labelledby="compare-title">
      <h2 id="compare-title">Capture</h2>
      <div class="compare-single">${figure('This run', newSrc, 'This run’s capture', 'new')}</div>
    </section>`;
  const diffSrc = diff.diffImageUrl ? runDiffHref(id, run.runId) : undefined;
  // Side by side, or the new capture with the changes over it: radios and checkboxes styled by the
  // stylesheet alone (the CSP allows no inline script), so it works without the page's script too.
  return html`<section class="card run-compare" aria-labelledby="compare-title">
    <div class="monitor-card-header">
      <h2 id="compare-title">Baseline and this run</h2>
      <div class="segmented" role="radiogroup" aria-label="How to compare">
        <input type="radio" name="compare-mode" id="compare-side" value="side" checked><label for="compare-side">Side by side</label>
        <input type="radio" name="compare-mode" id="compare-overlay" value="overlay"><label for="compare-overlay">Overlay</label>
      </div>
    </div>
    <div class="compare-side" id="compare-side-panel">
      ${figure(html`Baseline${view.baseline ? html` · ${time(epoch(view.baseline.startedAt))}` : ''}`, baselineSrc, 'The baseline’s capture', 'baseline')}
      ${figure(html`This run · ${time(epoch(run.startedAt))}`, newSrc, 'This run’s capture', 'new')}
    </div>
    <div class="compare-overlay" id="compare-overlay-panel">
      ${diffSrc ? html`<input type="checkbox" id="compare-show-diff" class="compare-toggle" checked><label for="compare-show-diff">Changed pixels</label>` : ''}
      <input type="checkbox" id="compare-show-regions" class="compare-toggle" checked><label for="compare-show-regions">Regions (${diff.regions.length})</label>
      <div class="compare-stack">
        <img src="${newSrc}" alt="This run’s capture, with the changes over it" class="compare-base">
        ${diffSrc ? html`<img src="${diffSrc}" alt="" class="compare-diff">` : ''}
        ${regionsLayer(diff)}
      </div>
      ${diffSrc ? '' : html`<p class="hint">No pixel changed: there is no diff image.</p>`}
    </div>
  </section>`;
}

function regionsCard(diff: CaptureDiff): SafeHtml {
  return html`<section class="card card-flush" aria-labelledby="regions-title">
    <div class="card-header"><h2 id="regions-title">Changed regions</h2><span class="muted">${diff.regions.length || 'none'}</span></div>
    ${
      diff.regions.length
        ? html`<div class="table-wrap"><table class="table" id="regions-table">
            <thead><tr><th scope="col" class="num">x</th><th scope="col" class="num">y</th><th scope="col" class="num">Width</th><th scope="col" class="num">Height</th></tr></thead>
            <tbody>${diff.regions.map(
              (r) =>
                html`<tr><td class="num">${r.x}</td><td class="num">${r.y}</td><td class="num">${r.width}</td><td class="num">${r.height}</td></tr>`,
            )}</tbody>
          </table></div>`
        : emptyState('No region changed', 'The pixels are the same as the baseline’s (anti-aliasing is not counted).')
    }
  </section>`;
}

function textCard(diff: CaptureDiff): SafeHtml {
  const lines = (kind: 'added' | 'removed', list: string[]) =>
    list.length
      ? html`<ul class="text-lines text-lines-${kind}">${list.map((line) => html`<li><span aria-hidden="true">${kind === 'added' ? '+' : '−'}</span> ${line}</li>`)}</ul>`
      : html`<p class="muted">none</p>`;
  return html`<section class="card" aria-labelledby="text-title">
    <h2 id="text-title">Text</h2>
    <div class="text-diff">
      <div><h3 class="text-diff-title text-added">Added (${diff.textAdded.length})</h3>${lines('added', diff.textAdded)}</div>
      <div><h3 class="text-diff-title text-removed">Removed (${diff.textRemoved.length})</h3>${lines('removed', diff.textRemoved)}</div>
    </div>
  </section>`;
}

/** One run against its baseline: both captures side by side, the diff as an overlay, the regions, the text added and removed. */
export function monitorRunPage(view: MonitorRunPageView): SafeHtml {
  const { ctx, monitor, run } = view;
  const pin =
    run.status === 'succeeded' && !run.golden
      ? postButton(ctx, `${runHref(monitor.monitorId, run.runId)}/golden`, 'Pin as golden', 'button')
      : '';
  const body = html`${pageHeading(
    'Run',
    html`of <a href="${monitorHref(monitor.monitorId)}">${monitor.name}</a> · <code class="job-id">${run.runId}</code>`,
    pin,
  )}
  ${flashBanner(ctx.flash)}
  ${run.golden ? alert('info', 'This run is the golden baseline: later runs are compared with it.') : ''}
  <div class="stack">
    ${detailsCard(view)}
    ${compareCard(view)}
    ${run.diff ? regionsCard(run.diff) : ''}
    ${run.diff ? textCard(run.diff) : ''}
  </div>`;
  return page({ title: `Run of ${monitor.name}`, body, assets: view.assets, ctx, section: 'monitors' });
}

import type { UsageReport } from '@daguerre/contract';
import { html, trusted, type SafeHtml } from '../html.js';
import { DASHBOARD_PATH, type DashboardContext } from '../session.js';
import type { DailyCaptures, LedgerRow } from '../usage-stats.js';
import { formatBytes, formatDate, formatDuration, formatNumber, formatWindow, plural, time } from './format.js';
import { badge, emptyState, flashBanner, page, pageHeading, type Assets } from './layout.js';

export interface UsageView {
  ctx: DashboardContext;
  assets: Assets;
  report: UsageReport;
  days: DailyCaptures[];
  latest: LedgerRow[];
  keyNames: Map<string, string>;
  now: number;
}

const DAY_MS = 86_400_000;

/** A round axis maximum (1, 2, 5 × 10^n) at or above the value, never below 4. */
function niceMax(value: number): number {
  const target = Math.max(4, value);
  const magnitude = 10 ** Math.floor(Math.log10(target));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= target) return step * magnitude;
  return 10 * magnitude;
}

/** Server-rendered bar chart: one stacked bar (charged, cache hits, failed) per UTC day of the period. */
export function capturesChart(days: DailyCaptures[], now: number): SafeHtml {
  const width = 760;
  const height = 240;
  const margin = { top: 16, right: 8, bottom: 30, left: 40 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const n = Math.max(1, days.length);
  const band = plotW / n;
  const barW = Math.max(2, Math.min(28, band * 0.68));
  const peak = Math.max(0, ...days.map((d) => d.charged + d.cached + d.failed));
  const max = niceMax(peak);
  const y = (v: number) => margin.top + plotH - (v / max) * plotH;
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const labelEvery = Math.ceil(n / 10);
  const parts: string[] = [];
  for (const tick of [0, max / 2, max]) {
    parts.push(
      `<line class="grid" x1="${margin.left}" x2="${width - margin.right}" y1="${y(tick).toFixed(1)}" y2="${y(tick).toFixed(1)}"/>`,
      `<text class="axis" x="${margin.left - 8}" y="${(y(tick) + 4).toFixed(1)}" text-anchor="end">${formatNumber(tick)}</text>`,
    );
  }
  days.forEach((day, i) => {
    const x = margin.left + i * band + (band - barW) / 2;
    const label = formatDate(day.day);
    const details = [
      plural(day.charged, 'capture'),
      day.cached ? `${day.cached} from cache` : '',
      day.failed ? `${day.failed} failed` : '',
      plural(day.credits, 'credit'),
    ];
    const tooltip = `${label}: ${details.filter(Boolean).join(', ')}`;
    const classes = ['day', day.day === today ? 'today' : '', day.day > today ? 'future' : ''].filter(Boolean).join(' ');
    parts.push(`<g class="${classes}"><title>${tooltip}</title>`);
    parts.push(
      `<rect class="hit" x="${(margin.left + i * band).toFixed(1)}" y="${margin.top}" width="${band.toFixed(1)}" height="${plotH}"/>`,
    );
    let stacked = 0;
    for (const [value, kind] of [
      [day.charged, 'ok'],
      [day.cached, 'cached'],
      [day.failed, 'failed'],
    ] as const) {
      if (value === 0) continue;
      const top = y(stacked + value);
      parts.push(
        `<rect class="bar bar-${kind}" x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(stacked) - top).toFixed(1)}"/>`,
      );
      stacked += value;
    }
    if (i % labelEvery === 0 || day.day === today) {
      const d = new Date(day.day);
      const text = i === 0 || d.getUTCDate() === 1 ? label.replace(/ \d{4}$/, '') : String(d.getUTCDate());
      parts.push(
        `<text class="axis ${day.day === today ? 'axis-today' : ''}" x="${(x + barW / 2).toFixed(1)}" y="${height - 10}" text-anchor="middle">${text}</text>`,
      );
    }
    parts.push('</g>');
  });
  const totalOf = (d: DailyCaptures) => d.charged + d.cached + d.failed;
  const totals = days.reduce((sum, d) => sum + totalOf(d), 0);
  const busiest = days.reduce<DailyCaptures | undefined>((best, d) => (!best || totalOf(d) > totalOf(best) ? d : best), undefined);
  const description =
    totals === 0
      ? 'No captures in this period yet.'
      : `${plural(totals, 'capture request')} in this period; the busiest day was ${formatDate(busiest!.day)} with ${totalOf(busiest!)}.`;
  const svg = `<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="chart-title chart-desc" preserveAspectRatio="xMidYMid meet">
    <title id="chart-title">Captures per day</title><desc id="chart-desc">${description}</desc>${parts.join('')}
    ${totals === 0 ? `<text class="chart-empty" x="${margin.left + plotW / 2}" y="${margin.top + plotH / 2}" text-anchor="middle">No captures yet in this period</text>` : ''}
  </svg>`;
  // Only numbers and formatted dates go into the markup above.
  return trusted(svg);
}

function meter(fraction: number, label: string): SafeHtml {
  const pct = Math.max(0, Math.min(100, fraction * 100));
  return trusted(
    `<svg class="meter" viewBox="0 0 100 6" preserveAspectRatio="none" role="img" aria-label="${label}"><rect class="meter-track" width="100" height="6" rx="3"/><rect class="meter-fill ${pct > 90 ? 'meter-danger' : pct > 75 ? 'meter-warn' : ''}" width="${pct.toFixed(2)}" height="6" rx="3"/></svg>`,
  );
}

const STATUS: Record<string, { kind: 'ok' | 'warn' | 'bad' | 'neutral'; label: string }> = {
  charged: { kind: 'ok', label: 'Succeeded' },
  cache_hit: { kind: 'neutral', label: 'Cache hit' },
  released: { kind: 'bad', label: 'Failed' },
  reserved: { kind: 'warn', label: 'In progress' },
};

function latestTable(view: UsageView): SafeHtml {
  if (view.latest.length === 0) {
    return emptyState(
      'No captures yet',
      html`Your captures show up here as soon as you make one, from your code or from the <a href="${DASHBOARD_PATH}/playground">Playground</a>.`,
    );
  }
  return html`<div class="table-wrap"><table class="table" id="captures-table">
    <thead><tr>
      <th scope="col">Time</th><th scope="col">Format</th><th scope="col">Status</th><th scope="col" class="num">Duration</th>
      <th scope="col" class="num">Size</th><th scope="col" class="num">Credits</th><th scope="col">Source</th><th scope="col">Key</th>
    </tr></thead>
    <tbody>${view.latest.map((row) => {
      const status = STATUS[row.status] ?? { kind: 'neutral' as const, label: row.status };
      return html`<tr data-request-id="${row.requestId}">
        <td>${time(row.createdAt)}</td>
        <td><span class="format">${row.format.toUpperCase()}</span>${row.mode === 'async' ? html` <span class="muted" title="async capture (POST /captures)">job</span>` : ''}</td>
        <td>${badge(status.kind, status.label)}${row.errorCode ? html` <code class="error-code">${row.errorCode}</code>` : ''}</td>
        <td class="num">${formatDuration(row.processingMs)}</td>
        <td class="num">${formatBytes(row.fileSize)}</td>
        <td class="num">${row.status === 'charged' ? row.credits : 0}</td>
        <td class="truncate">${row.source === 'html' ? html`<span class="muted">inline HTML</span>` : (row.targetHost ?? '—')}</td>
        <td class="truncate">${row.apiKeyId ? (view.keyNames.get(row.apiKeyId) ?? html`<span class="muted">deleted key</span>`) : '—'}</td>
      </tr>`;
    })}</tbody>
  </table></div>`;
}

export function usagePage(view: UsageView): SafeHtml {
  const { ctx, report, now } = view;
  const c = report.credits;
  const start = Date.parse(c.periodStart);
  const end = Date.parse(c.periodEnd);
  const daysLeft = Math.max(0, Math.ceil((end - now) / DAY_MS));
  const available = c.remaining + c.usedThisPeriod;
  const captures = view.days.reduce((sum, d) => sum + d.charged, 0);
  const cached = view.days.reduce((sum, d) => sum + d.cached, 0);
  const failed = view.days.reduce((sum, d) => sum + d.failed, 0);
  const limit = report.rateLimits.capture;
  const body = html`${pageHeading(
    'Usage',
    html`Current billing period: ${time(start, 'date')} – ${time(end, 'date')}
      <span class="muted">· ${plural(daysLeft, 'day')} left</span>`,
  )}
  ${flashBanner(ctx.flash)}
  <section class="stats" aria-label="Credits and limits">
    <div class="card stat stat-primary">
      <p class="stat-label">Credits remaining</p>
      <p class="stat-value" data-stat="remaining">${formatNumber(c.remaining)}</p>
      ${meter(available > 0 ? c.usedThisPeriod / available : 0, `${formatNumber(c.usedThisPeriod)} of ${formatNumber(available)} credits used`)}
      <p class="stat-note">of ${formatNumber(available)} available this period</p>
    </div>
    <div class="card stat">
      <p class="stat-label">Used this period</p>
      <p class="stat-value" data-stat="used">${formatNumber(c.usedThisPeriod)}</p>
      <p class="stat-note" data-stat="captures">${plural(captures, 'capture')}${cached ? `, ${cached} from cache` : ''}${failed ? `, ${failed} failed (free)` : ''}</p>
    </div>
    <div class="card stat">
      <p class="stat-label">Monthly allocation</p>
      <p class="stat-value" data-stat="allocation">${formatNumber(c.totalMonthlyAllocation)}</p>
      <p class="stat-note">${c.plan ? html`${c.plan.name} plan` : 'No active plan'}${c.includesCreditRollover ? ' · includes rolled-over credits' : ''}
        · ${c.subscriptionStatus}</p>
    </div>
    <div class="card stat">
      <p class="stat-label">Rate limit</p>
      <p class="stat-value" data-stat="rate-limit">${formatNumber(limit.maxRequestsPerWindow)}<span class="stat-unit"> / ${formatWindow(limit.windowMs)}</span></p>
      <p class="stat-note">capture requests, shared by all keys of your organization</p>
    </div>
  </section>
  <section class="card" aria-labelledby="daily-title">
    <div class="card-header">
      <h2 id="daily-title">Captures per day</h2>
      <div class="legend" aria-hidden="true"><span><span class="swatch swatch-ok"></span>Charged</span><span><span class="swatch swatch-cached"></span>Cache hit</span><span><span class="swatch swatch-failed"></span>Failed</span></div>
    </div>
    <div class="chart-wrap">${capturesChart(view.days, now)}</div>
    <p class="hint">Days in UTC. Only charged captures use credits: failed captures and answers from the cache are free.</p>
  </section>
  <section class="card card-flush" aria-labelledby="latest-title">
    <div class="card-header"><h2 id="latest-title">Latest captures</h2><span class="muted">last ${view.latest.length || 'none'}</span></div>
    ${latestTable(view)}
  </section>`;
  return page({ title: 'Usage', body, assets: view.assets, ctx, section: 'usage' });
}

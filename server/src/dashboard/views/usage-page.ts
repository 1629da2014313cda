import type { UsageReport } from '@daguerre/contract';
import { html, trusted, type SafeHtml } from '../html.js';
import { DASHBOARD_PATH, type DashboardContext } from '../session.js';
import type { ApiKeyRow } from '../../store/api-key-repository.js';
import type { Outcomes, UsageByKey } from '../usage-by-key.js';
import { DAY_MS, PERIOD_CHOICES, type UsagePeriod } from '../usage-period.js';
import type { LedgerRow } from '../usage-stats.js';
import { formatBytes, formatDate, formatDuration, formatNumber, formatWindow, plural, time } from './format.js';
import { badge, emptyState, flashBanner, page, pageHeading, type Assets } from './layout.js';
import { usageChart } from './usage-chart.js';
import { keyTotalsTable } from './usage-key-table.js';
import { chartSeries } from './usage-series.js';

export interface UsageView {
  ctx: DashboardContext;
  assets: Assets;
  report: UsageReport;
  /** The period the chart and the per-key totals cover (the billing period unless another was chosen). */
  period: UsagePeriod;
  usage: UsageByKey;
  /** Totals of the billing period, for its card (the same as `usage.total` when that is the period shown). */
  billingTotal: Outcomes;
  latest: LedgerRow[];
  keys: ApiKeyRow[];
  /** REQUEST_LOG_RETENTION_DAYS: how far back the per-day figures reach. */
  retentionDays: number;
  now: number;
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
  refused: { kind: 'warn', label: 'Refused' },
};

function latestTable(view: UsageView): SafeHtml {
  const keyNames = new Map(view.keys.map((key) => [key.id, key.name]));
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
        <td class="truncate">${row.apiKeyId ? (keyNames.get(row.apiKeyId) ?? html`<span class="muted">deleted key</span>`) : '—'}</td>
      </tr>`;
    })}</tbody>
  </table></div>`;
}

/** "1 Mar – 31 Mar 2025": the period's first and last day (its end is exclusive). */
const periodDates = (period: UsagePeriod) => `${formatDate(period.start)} – ${formatDate(period.end - 1)}`;

/** A GET form, so the choice is in the address and works without script. */
function periodForm(period: UsagePeriod): SafeHtml {
  return html`<form method="get" action="${DASHBOARD_PATH}/usage" class="usage-period">
    <label for="usage-period">Period</label>
    <select id="usage-period" name="period">
      ${PERIOD_CHOICES.map((choice) => html`<option value="${choice.value}" ${choice.value === period.choice ? 'selected' : ''}>${choice.label}</option>`)}
    </select>
    <button type="submit" class="button button-small">Show</button>
  </form>`;
}

/** The chart of captures per day and key, and the period's totals per key. */
function usageByKeySections(view: UsageView): SafeHtml {
  const keys = new Map(view.keys.map((key) => [key.id, key]));
  const { series, colourOf } = chartSeries(view.usage, keys);
  const choice = PERIOD_CHOICES.find((c) => c.value === view.period.choice)!;
  const periodText = `${choice.label.toLowerCase()} (${periodDates(view.period)})`;
  return html`<section class="card" aria-labelledby="daily-title">
    <div class="card-header">
      <div>
        <h2 id="daily-title">Captures per day, by key</h2>
        <p class="muted" data-period="${view.period.choice}">${choice.label}: ${periodDates(view.period)}</p>
      </div>
      ${periodForm(view.period)}
    </div>
    ${usageChart({ usage: view.usage, series, periodText, now: view.now })}
    <p class="hint">Days in UTC. Only charged captures use credits: answers from the cache, failed captures and refused
      requests are free. Per-day figures come from the <a href="${DASHBOARD_PATH}/log">request log</a>, which this server keeps for
      ${plural(view.retentionDays, 'day')} (<code>REQUEST_LOG_RETENTION_DAYS</code>): days older than that show only what is left of them.</p>
  </section>
  <section class="card card-flush" aria-labelledby="by-key-title">
    <div class="card-header"><h2 id="by-key-title">Totals per key</h2><span class="muted">${periodDates(view.period)}</span></div>
    ${keyTotalsTable({ usage: view.usage, keys, colourOf })}
  </section>`;
}

export function usagePage(view: UsageView): SafeHtml {
  const { ctx, report, now } = view;
  const c = report.credits;
  const start = Date.parse(c.periodStart);
  const end = Date.parse(c.periodEnd);
  const daysLeft = Math.max(0, Math.ceil((end - now) / DAY_MS));
  const available = c.remaining + c.usedThisPeriod;
  const { charged: captures, cached, failed, refused } = view.billingTotal;
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
      <p class="stat-note" data-stat="captures">${plural(captures, 'capture')}${cached ? `, ${cached} from cache` : ''}${failed ? `, ${failed} failed (free)` : ''}${refused ? `, ${refused} refused` : ''}</p>
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
  ${usageByKeySections(view)}
  <section class="card card-flush" aria-labelledby="latest-title">
    <div class="card-header"><h2 id="latest-title">Latest captures</h2><span class="muted">last ${view.latest.length || 'none'}</span></div>
    ${latestTable(view)}
  </section>`;
  return page({ title: 'Usage', body, assets: view.assets, ctx, section: 'usage' });
}

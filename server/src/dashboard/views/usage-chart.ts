import { html, type SafeHtml } from '../html.js';
import { addOutcomes, noOutcomes, requestsOf, type Outcomes, type UsageByKey } from '../usage-by-key.js';
import { DAY_MS } from '../usage-period.js';
import { formatDate, formatNumber, plural } from './format.js';
import { layoutUsageChart, type ChartLayout, type Column, type Segment } from './usage-chart-layout.js';
import { keyText, type ChartSeries } from './usage-series.js';

/**
 * The usage chart as server-rendered SVG: captures per UTC day, stacked by API key, each key's
 * charged captures solid and its free ones (cache hits, failures, refusals) pale. Colours come
 * from classes in the stylesheet, so dark mode applies and the page's CSP (no inline style) holds.
 * Key names are user data: everything goes through `html`, which escapes it.
 */

export interface UsageChartView {
  usage: UsageByKey;
  series: ChartSeries[];
  /** The period in words, for the chart's accessible name. */
  periodText: string;
  now: number;
}

const isoDay = (day: number) => new Date(day).toISOString().slice(0, 10);
const free = (o: Outcomes) => o.cached + o.failed + o.refused;

/** What every key did on day `d` of the period. */
function dayTotal(series: ChartSeries[], d: number): Outcomes {
  const total = noOutcomes();
  for (const s of series) addOutcomes(total, s.perDay[d]!);
  return total;
}

/** "3 charged (3 credits)" or "2 from cache, 1 failed, 1 refused": what one segment stands for. */
function partText(o: Outcomes, part: Segment['part']): string {
  if (part === 'paid') return `${formatNumber(o.charged)} charged (${plural(o.credits, 'credit')})`;
  const parts = [
    o.cached ? `${formatNumber(o.cached)} from cache` : '',
    o.failed ? `${formatNumber(o.failed)} failed` : '',
    o.refused ? `${formatNumber(o.refused)} refused` : '',
  ];
  return parts.filter(Boolean).join(', ');
}

function segmentMarkup(segment: Segment, column: Column, series: ChartSeries[]): SafeHtml {
  const s = series[segment.series]!;
  const outcomes = s.perDay[column.index]!;
  const part = segment.part === 'paid' ? 'bar-ok' : 'bar-free';
  return html`<rect class="bar ${part} ${s.colour}" x="${segment.x}" y="${segment.y}" width="${segment.width}" height="${segment.height}" data-series="${s.colour}" data-value="${segment.value}"><title>${keyText(s.label)}, ${formatDate(column.day)}: ${partText(outcomes, segment.part)}</title></rect>`;
}

function columnMarkup(column: Column, layout: ChartLayout, series: ChartSeries[], today: number): SafeHtml {
  const classes = ['day', column.day === today ? 'today' : '', column.day > today ? 'future' : ''].filter(Boolean).join(' ');
  const { charged } = dayTotal(series, column.index);
  const summary = column.total === 0 ? 'nothing' : `${plural(column.total, 'request')}, ${formatNumber(charged)} charged`;
  const top = layout.ticks[layout.ticks.length - 1]!.y;
  const bottom = layout.ticks[0]!.y;
  return html`<g class="${classes}" data-day="${isoDay(column.day)}"><title>${formatDate(column.day)}: ${summary}</title><rect class="hit" x="${column.x}" y="${top}" width="${column.width}" height="${bottom - top}"/>${column.segments.map((segment) => segmentMarkup(segment, column, series))}</g>`;
}

function description(view: UsageChartView): string {
  const { usage } = view;
  const total = requestsOf(usage.total);
  if (total === 0) return 'No captures in this period.';
  const totals = usage.days.map((_, d) => requestsOf(dayTotal(view.series, d)));
  const busiest = totals.indexOf(Math.max(...totals));
  const keys = view.series.map((s) => `${keyText(s.label)}: ${formatNumber(requestsOf(s.total))}`).join('; ');
  return `${plural(total, 'capture request')}, ${formatNumber(usage.total.charged)} charged. Busiest day ${formatDate(usage.days[busiest]!)} with ${formatNumber(totals[busiest]!)}. By key: ${keys}. The table of the chart's numbers has every figure.`;
}

function svg(view: UsageChartView): SafeHtml {
  const { series } = view;
  const layout = layoutUsageChart({
    days: view.usage.days,
    series: series.map((s) => ({ paid: s.perDay.map((o) => o.charged), free: s.perDay.map(free) })),
  });
  const today = Math.floor(view.now / DAY_MS) * DAY_MS;
  const empty = requestsOf(view.usage.total) === 0;
  const [, middle, top] = layout.ticks;
  return html`<svg class="chart usage-chart" viewBox="0 0 ${layout.width} ${layout.height}" width="100%" preserveAspectRatio="xMidYMid meet" role="img" aria-labelledby="usage-chart-title usage-chart-desc" data-max="${layout.max}">
    <title id="usage-chart-title">Captures per day by API key, ${view.periodText}</title>
    <desc id="usage-chart-desc">${description(view)}</desc>
    ${layout.ticks.map((tick) => html`<line class="grid" x1="0" x2="${layout.width}" y1="${tick.y}" y2="${tick.y}"/>`)}
    ${layout.columns.map((column) => columnMarkup(column, layout, series, today))}
    ${[middle!, top!].map((tick) => html`<text class="axis tick-label" x="${layout.columns[0]?.x ?? 0}" y="${tick.y - 6}">${formatNumber(tick.value)}</text>`)}
    ${layout.columns.map((column) =>
      column.label
        ? html`<text class="axis day-label${column.label.minor ? ' day-label-minor' : ''}${column.day === today ? ' axis-today' : ''}" x="${column.label.x}" y="${layout.height - 8}" text-anchor="${column.label.anchor}">${column.label.text}</text>`
        : '',
    )}
    ${empty ? html`<text class="chart-empty" x="${layout.width / 2}" y="${(middle?.y ?? 0) + 6}" text-anchor="middle">No captures in this period</text>` : ''}
  </svg>`;
}

function legend(series: ChartSeries[]): SafeHtml {
  if (series.length === 0) return html``;
  return html`<ul class="usage-legend" aria-label="Keys in the chart">
    ${series.map(
      (s) =>
        html`<li><span class="usage-swatch ${s.colour}" aria-hidden="true"></span><span>${s.label.name}${s.keyCount > 1 ? ` (${s.keyCount})` : ''}</span>${s.label.prefix ? html` <code class="prefix">${s.label.prefix}…</code>` : ''}${s.label.revoked ? html` <span class="muted">revoked</span>` : ''}</li>`,
    )}
    <li class="usage-legend-parts"><span class="usage-swatch usage-s-part" aria-hidden="true"></span>charged <span class="usage-swatch usage-s-part usage-swatch-free" aria-hidden="true"></span>free: cache hits, failed, refused</li>
  </ul>`;
}

/** The chart's numbers as a table, for screen readers and for anyone who wants the exact figures. */
function numbersTable(view: UsageChartView): SafeHtml {
  const today = Math.floor(view.now / DAY_MS) * DAY_MS;
  const rows = view.usage.days.map((day, d) => ({ day, d })).filter(({ day }) => day <= today);
  return html`<details class="usage-numbers">
    <summary>The chart's numbers</summary>
    <div class="table-wrap"><table class="table" id="usage-numbers-table">
      <caption class="visually-hidden">Capture requests per day and key (charged, cached, failed and refused together)</caption>
      <thead><tr><th scope="col">Day</th>${view.series.map((s) => html`<th scope="col" class="num">${keyText(s.label)}</th>`)}<th scope="col" class="num">All keys</th><th scope="col" class="num">Charged</th><th scope="col" class="num">Credits</th></tr></thead>
      <tbody>${rows.map(({ day, d }) => {
        const all = dayTotal(view.series, d);
        return html`<tr data-day="${isoDay(day)}"><th scope="row">${formatDate(day)}</th>${view.series.map((s) => html`<td class="num">${formatNumber(requestsOf(s.perDay[d]!))}</td>`)}<td class="num">${formatNumber(requestsOf(all))}</td><td class="num">${formatNumber(all.charged)}</td><td class="num">${formatNumber(all.credits)}</td></tr>`;
      })}</tbody>
    </table></div>
  </details>`;
}

export function usageChart(view: UsageChartView): SafeHtml {
  return html`${legend(view.series)}
    <div class="usage-chart-wrap">${svg(view)}</div>
    ${numbersTable(view)}`;
}

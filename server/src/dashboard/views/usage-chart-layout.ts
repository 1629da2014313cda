import { formatDate } from './format.js';

/**
 * The geometry of the usage chart, apart from its markup so it can be tested as plain numbers:
 * one column per day, one stack per column, one segment per series and part (charged below,
 * free above). The drawing is in a fixed coordinate system (the SVG's viewBox) that the browser
 * scales to the card's width, so the chart never needs a horizontal scroll bar.
 */

export const CHART_WIDTH = 800;
export const CHART_HEIGHT = 320;
/**
 * Room for labels. Text is scaled with the drawing, so on a phone the stylesheet draws it up to
 * ~26 units tall to stay readable: the top and bottom margins leave space for that size.
 */
export const PLOT = { left: 8, right: CHART_WIDTH - 8, top: 34, bottom: CHART_HEIGHT - 40 } as const;
/** Bars never grow wider than this, so a week does not turn into seven slabs. */
const MAX_BAR_WIDTH = 44;
/** Share of a day's column the bar takes; the rest is the gap between days. */
const BAR_SHARE = 0.72;

export interface ChartInput {
  /** Start of each UTC day of the period, epoch ms. */
  days: number[];
  /** Each series, drawn bottom up: its charged and its free (cached, failed, refused) requests per day. */
  series: { paid: number[]; free: number[] }[];
}

export interface Segment {
  series: number;
  part: 'paid' | 'free';
  value: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface DayLabel {
  text: string;
  x: number;
  anchor: 'start' | 'middle';
  /** Left out on narrow screens, where the text is drawn larger and fewer labels fit. */
  minor: boolean;
}

export interface Column {
  day: number;
  /** Position in the period (the index into each series' per-day values). */
  index: number;
  /** The whole column (for hovering a day), and the bar inside it. */
  x: number;
  width: number;
  total: number;
  segments: Segment[];
  label: DayLabel | null;
}

export interface ChartLayout {
  width: number;
  height: number;
  /** Top of the value axis: a round number at or above the busiest day. */
  max: number;
  /** Horizontal grid lines, from 0 up. */
  ticks: { value: number; y: number }[];
  columns: Column[];
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/**
 * A round axis maximum (1, 2, 4, 5 × 10^n) at or above the value, never below 4, and even so
 * the middle grid line is a whole number of captures.
 */
export function niceMax(value: number): number {
  const target = Math.max(4, value);
  const magnitude = 10 ** Math.floor(Math.log10(target));
  for (const step of [1, 2, 4, 5, 10]) {
    const candidate = step * magnitude;
    if (candidate >= target && candidate % 2 === 0) return candidate;
  }
  return 10 * magnitude;
}

/**
 * Which days carry a label: about fifteen on a wide screen, and every few of those (about five)
 * on a narrow one, where the others are `minor`; both evenly spaced. The first label names the
 * month, and so does the first of each month.
 */
function dayLabel(day: number, index: number, count: number, x: number, width: number): DayLabel | null {
  const minorStep = Math.ceil(count / 15);
  const majorStep = minorStep * Math.ceil(count / (5 * minorStep));
  if (index % minorStep !== 0) return null;
  const major = index % majorStep === 0;
  const date = new Date(day).getUTCDate();
  const text = index === 0 || date === 1 ? formatDate(day).replace(/ \d{4}$/, '') : String(date);
  // The first label starts at its column so a long one ("28 Feb") is not cut off at the left edge.
  return index === 0
    ? { text, x: round1(x), anchor: 'start', minor: false }
    : { text, x: round1(x + width / 2), anchor: 'middle', minor: !major };
}

export function layoutUsageChart(input: ChartInput): ChartLayout {
  const count = Math.max(1, input.days.length);
  const band = (PLOT.right - PLOT.left) / count;
  const barWidth = Math.min(MAX_BAR_WIDTH, band * BAR_SHARE);
  const totals = input.days.map((_, d) => input.series.reduce((sum, s) => sum + (s.paid[d] ?? 0) + (s.free[d] ?? 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const y = (value: number) => PLOT.bottom - (value / max) * (PLOT.bottom - PLOT.top);
  const columns = input.days.map((day, d): Column => {
    const x = PLOT.left + d * band;
    const barX = round1(x + (band - barWidth) / 2);
    const segments: Segment[] = [];
    let stacked = 0;
    input.series.forEach((s, series) => {
      for (const part of ['paid', 'free'] as const) {
        const value = s[part][d] ?? 0;
        if (value === 0) continue;
        // Both edges come from the running sum, so stacked segments meet without gaps or overlaps.
        const top = round1(y(stacked + value));
        const bottom = round1(y(stacked));
        segments.push({ series, part, value, x: barX, y: top, width: round1(barWidth), height: round1(bottom - top) });
        stacked += value;
      }
    });
    return { day, index: d, x: round1(x), width: round1(band), total: totals[d]!, segments, label: dayLabel(day, d, count, x, band) };
  });
  const ticks = [0, max / 2, max].map((value) => ({ value, y: round1(y(value)) }));
  return { width: CHART_WIDTH, height: CHART_HEIGHT, max, ticks, columns };
}

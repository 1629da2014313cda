import { describe, expect, it } from 'vitest';
import type { ApiKeyRow } from '../../server/src/store/api-key-repository.js';
import { foldUsage, type UsageCount } from '../../server/src/dashboard/usage-by-key.js';
import { usagePeriod } from '../../server/src/dashboard/usage-period.js';
import { CHART_HEIGHT, CHART_WIDTH, layoutUsageChart, niceMax, PLOT } from '../../server/src/dashboard/views/usage-chart-layout.js';
import { chartSeries, NAMED_SERIES } from '../../server/src/dashboard/views/usage-series.js';

const DAY = 86_400_000;
const MARCH_1 = Date.UTC(2030, 2, 1);
const days = (count: number, from = MARCH_1) => Array.from({ length: count }, (_, i) => from + i * DAY);
const zeros = (count: number) => Array.from({ length: count }, () => 0);

describe('the usage chart layout', () => {
  it('rounds the axis up to an even, round number, never below 4', () => {
    expect([0, 1, 4, 5, 8, 10, 11, 37, 40, 41, 99, 101, 950].map(niceMax)).toEqual([4, 4, 4, 10, 10, 10, 20, 40, 40, 50, 100, 200, 1000]);
  });

  it('stacks each day bottom up, every segment as tall as its count and touching the next', () => {
    const layout = layoutUsageChart({
      days: days(3),
      series: [
        { paid: [2, 0, 1], free: [1, 0, 0] },
        { paid: [3, 0, 0], free: [2, 0, 0] },
      ],
    });
    expect(layout.max).toBe(10);
    const unit = (PLOT.bottom - PLOT.top) / layout.max;
    const [first, empty, last] = layout.columns;
    expect(first!.total).toBe(8);
    expect(first!.segments.map((s) => [s.series, s.part, s.value])).toEqual([
      [0, 'paid', 2],
      [0, 'free', 1],
      [1, 'paid', 3],
      [1, 'free', 2],
    ]);
    expect(first!.segments[0]!.y + first!.segments[0]!.height).toBeCloseTo(PLOT.bottom, 5);
    for (const [i, segment] of first!.segments.entries()) {
      expect(Math.abs(segment.height - segment.value * unit)).toBeLessThanOrEqual(0.15);
      if (i > 0) expect(segment.y + segment.height).toBeCloseTo(first!.segments[i - 1]!.y, 5);
    }
    expect(empty!.segments).toEqual([]);
    expect(last!.segments.map((s) => s.value)).toEqual([1]);
    expect(layout.ticks.map((t) => t.value)).toEqual([0, 5, 10]);
    expect(layout.ticks[0]!.y).toBe(PLOT.bottom);
    expect(layout.ticks[2]!.y).toBe(PLOT.top);
  });

  it('keeps every bar inside the drawing, and bars no wider than 44 units for a short period', () => {
    for (const count of [1, 7, 30, 31, 32]) {
      const layout = layoutUsageChart({ days: days(count), series: [{ paid: zeros(count).map((_, i) => i), free: zeros(count) }] });
      expect(layout.width).toBe(CHART_WIDTH);
      expect(layout.height).toBe(CHART_HEIGHT);
      expect(layout.columns).toHaveLength(count);
      for (const column of layout.columns) {
        for (const segment of column.segments) {
          expect(segment.x).toBeGreaterThanOrEqual(column.x);
          expect(segment.x + segment.width).toBeLessThanOrEqual(column.x + column.width + 0.1);
          expect(segment.width).toBeLessThanOrEqual(44);
          expect(segment.y).toBeGreaterThanOrEqual(PLOT.top);
        }
      }
      expect(layout.columns.at(-1)!.x + layout.columns.at(-1)!.width).toBeLessThanOrEqual(PLOT.right + 0.1);
    }
  });

  it('labels about fifteen days on a wide screen and five on a narrow one, naming the month first and on the 1st', () => {
    const layout = layoutUsageChart({ days: days(31, Date.UTC(2030, 1, 14)), series: [] });
    const labels = layout.columns.flatMap((c) => (c.label ? [c.label] : []));
    expect(labels.map((l) => l.text)).toEqual(['14 Feb', '17', '20', '23', '26', '1 Mar', '4', '7', '10', '13', '16']);
    expect(labels.filter((l) => !l.minor).map((l) => l.text)).toEqual(['14 Feb', '23', '4', '13']);
    expect(labels[0]!.anchor).toBe('start');
    expect(labels.slice(1).every((l) => l.anchor === 'middle')).toBe(true);
    // An empty chart still has its axis.
    expect(layout.max).toBe(4);
  });
});

describe('usage per key, folded for the page', () => {
  const start = MARCH_1 + 10 * 3_600_000; // a billing period may start in the middle of a day
  const end = start + 3 * DAY;
  const day = (offset: number) => MARCH_1 / DAY + offset;
  const counts: UsageCount[] = [
    { dayNumber: day(0), apiKeyId: 'a', status: 'charged', count: 3, credits: 4 },
    { dayNumber: day(0), apiKeyId: 'a', status: 'released', count: 1, credits: 1 },
    { dayNumber: day(0), apiKeyId: 'b', status: 'refused', count: 2, credits: 0 },
    { dayNumber: day(2), apiKeyId: 'b', status: 'charged', count: 5, credits: 5 },
    { dayNumber: day(3), apiKeyId: 'b', status: 'cache_hit', count: 1, credits: 0 },
    { dayNumber: day(1), apiKeyId: null, status: 'reserved', count: 9, credits: 9 },
    { dayNumber: day(9), apiKeyId: 'a', status: 'charged', count: 9, credits: 9 },
  ];

  it('has one entry per day, counts credits of charged captures only, ignores running and out-of-period rows', () => {
    const usage = foldUsage(counts, start, end);
    expect(usage.days).toEqual(days(4));
    expect(usage.keys.map((k) => k.apiKeyId)).toEqual(['b', 'a']);
    expect(usage.keys[1]!.perDay[0]).toEqual({ charged: 3, cached: 0, failed: 1, refused: 0, credits: 4 });
    expect(usage.keys[0]!.total).toEqual({ charged: 5, cached: 1, failed: 0, refused: 2, credits: 5 });
    expect(usage.total).toEqual({ charged: 8, cached: 1, failed: 1, refused: 2, credits: 9 });
  });

  it('names the six busiest keys and adds up the rest as "Other keys"', () => {
    const many: UsageCount[] = Array.from({ length: 9 }, (_, i) => ({
      dayNumber: day(1),
      apiKeyId: `k${i}`,
      status: 'charged',
      count: 20 - i,
      credits: 20 - i,
    }));
    const usage = foldUsage(many, MARCH_1, MARCH_1 + 2 * DAY);
    const keys = new Map<string, ApiKeyRow>(
      usage.keys
        .slice(0, 8)
        .map((k, i) => [
          k.apiKeyId!,
          { id: k.apiKeyId!, name: `Key ${i}`, prefix: `rs_${i}`, revoked_at: i === 1 ? 1 : null } as ApiKeyRow,
        ]),
    );
    const { series, colourOf } = chartSeries(usage, keys);
    expect(series).toHaveLength(NAMED_SERIES + 1);
    expect(series.slice(0, 2).map((s) => s.label)).toEqual([
      { name: 'Key 0', prefix: 'rs_0', revoked: false },
      { name: 'Key 1', prefix: 'rs_1', revoked: true },
    ]);
    const other = series.at(-1)!;
    expect(other.label.name).toBe('Other keys');
    expect(other.keyCount).toBe(3);
    expect(other.perDay[1]!.charged).toBe(14 + 13 + 12);
    expect(other.total.credits).toBe(39);
    expect(colourOf.get('k0')).toBe('usage-s0');
    expect(colourOf.get('k8')).toBe('usage-s-other');
    // k8 is not in the key list: a deleted key.
    expect(chartSeries({ ...usage, keys: usage.keys.slice(8) }, keys).series[0]!.label).toEqual({
      name: 'Deleted key',
      prefix: null,
      revoked: false,
    });
  });
});

describe('the period chosen on the usage page', () => {
  const billing = { start: Date.UTC(2030, 2, 14, 9, 30), end: Date.UTC(2030, 3, 14, 9, 30) };
  const now = Date.UTC(2030, 2, 20, 15);

  it('is the billing period by default and for any unknown value', () => {
    for (const value of [undefined, '', 'current', 'yesterday', ['7d', '30d']]) {
      expect(usagePeriod(value, billing, now)).toEqual({ choice: 'current', ...billing });
    }
  });

  it('ends with today for the rolling periods', () => {
    expect(usagePeriod('7d', billing, now)).toEqual({ choice: '7d', start: Date.UTC(2030, 2, 14), end: Date.UTC(2030, 2, 21) });
    expect(usagePeriod('30d', billing, now)).toEqual({ choice: '30d', start: Date.UTC(2030, 1, 19), end: Date.UTC(2030, 2, 21) });
  });
});

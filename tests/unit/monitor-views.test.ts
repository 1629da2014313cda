import { describe, expect, it } from 'vitest';
import { formatInterval, formatPercent } from '../../server/src/dashboard/views/monitor-views.js';

describe("the monitors' pages in words", () => {
  it('says an interval in the largest whole unit', () => {
    expect([1, 90, 60, 300, 3600, 7200, 5400, 86_400, 172_800].map(formatInterval)).toEqual([
      'every 1 s',
      'every 90 s',
      'every 1 min',
      'every 5 min',
      'every 1 h',
      'every 2 h',
      'every 90 min',
      'every day',
      'every 2 days',
    ]);
  });

  it('says a percentage as people read it', () => {
    expect([0, 0.004, 0.034, 0.5, 2.345, 23.6, 100].map(formatPercent)).toEqual([
      '0 %',
      '< 0.01 %',
      '0.03 %',
      '0.5 %',
      '2.3 %',
      '23.6 %',
      '100 %',
    ]);
  });
});

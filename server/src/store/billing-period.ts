/** Monthly billing periods in UTC: [start, end), end = start plus one calendar month. */

export interface Period {
  start: number;
  end: number;
}

function addMonths(epochMs: number, months: number): number {
  const date = new Date(epochMs);
  const day = date.getUTCDate();
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() + months);
  // Clamp to the month's last day (Jan 31 + 1 month = Feb 28/29, not Mar 3).
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  date.setUTCDate(Math.min(day, lastDay));
  return date.getTime();
}

export function firstPeriod(now: number): Period {
  return { start: now, end: addMonths(now, 1) };
}

/**
 * The period that contains `now`. Periods are contiguous: the next one starts exactly where the
 * last ended, and an organization idle for several months skips the periods it did not use.
 */
export function periodContaining(current: Period, now: number): Period {
  let period = current;
  while (now >= period.end) period = { start: period.end, end: addMonths(period.end, 1) };
  return period;
}

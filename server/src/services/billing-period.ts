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
 * The period that contains `now`, counting whole months on from `current.start` so that an
 * organization idle for several months lands in the right period, anchored to its first one.
 */
export function periodContaining(current: Period, now: number): Period {
  if (now < current.end) return current;
  let months = 1;
  while (addMonths(current.start, months + 1) <= now) months += 1;
  return { start: addMonths(current.start, months), end: addMonths(current.start, months + 1) };
}

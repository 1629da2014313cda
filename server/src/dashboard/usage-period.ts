/**
 * The period the usage page's chart and per-key totals cover, chosen with `?period=` (a plain GET
 * form, so it works without script and the address can be shared). Days are UTC days, as the
 * ledger's day numbers are.
 */

export const DAY_MS = 86_400_000;

export const PERIOD_CHOICES = [
  { value: 'current', label: 'This billing period' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
] as const;

export type PeriodChoice = (typeof PERIOD_CHOICES)[number]['value'];

export interface UsagePeriod {
  choice: PeriodChoice;
  /** Epoch ms, inclusive (UTC midnight for the rolling periods). */
  start: number;
  /** Epoch ms, exclusive. */
  end: number;
}

const isChoice = (value: unknown): value is PeriodChoice => PERIOD_CHOICES.some((choice) => choice.value === value);

/**
 * The period a query value names. Anything else (absent, misspelt, repeated) falls back to the
 * billing period, the page's default, rather than an error page: it is only a view choice.
 * The rolling periods end with today, so today's captures are always in them.
 */
export function usagePeriod(value: unknown, billing: { start: number; end: number }, now: number): UsagePeriod {
  const choice = isChoice(value) ? value : 'current';
  if (choice === 'current') return { choice, start: billing.start, end: billing.end };
  const days = choice === '7d' ? 7 : 30;
  const tomorrow = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
  return { choice, start: tomorrow - days * DAY_MS, end: tomorrow };
}

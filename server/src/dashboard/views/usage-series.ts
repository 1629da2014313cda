import type { ApiKeyRow } from '../../store/api-key-repository.js';
import { addOutcomes, noOutcomes, type Outcomes, type UsageByKey } from '../usage-by-key.js';

/**
 * Which keys the usage chart draws in a colour of their own. More than a handful of colours can
 * no longer be told apart, so the busiest keys are named and the rest share one grey series.
 */
export const NAMED_SERIES = 6;
export const OTHER_COLOUR = 'usage-s-other';

export interface KeyLabel {
  name: string;
  /** The key's public prefix; null when the key is gone or there was none. */
  prefix: string | null;
  revoked: boolean;
}

export interface ChartSeries {
  /** The CSS class that gives the series its colour: usage-s0 … usage-s5, or usage-s-other. */
  colour: string;
  label: KeyLabel;
  /** How many keys the series adds up (more than one for "Other keys"). */
  keyCount: number;
  /** One entry per day of the period. */
  perDay: Outcomes[];
  total: Outcomes;
}

/** How a ledger row's key is shown: a key may have been deleted since, or never been there. */
export function keyLabel(apiKeyId: string | null, keys: ReadonlyMap<string, ApiKeyRow>): KeyLabel {
  if (apiKeyId === null) return { name: 'No key', prefix: null, revoked: false };
  const key = keys.get(apiKeyId);
  if (!key) return { name: 'Deleted key', prefix: null, revoked: false };
  return { name: key.name, prefix: key.prefix, revoked: key.revoked_at !== null };
}

/** "Production (rs_AbC1234…)": a key's name and prefix as one line of text (titles, table headers). */
export function keyText(label: KeyLabel): string {
  return `${label.name}${label.prefix ? ` (${label.prefix}…)` : ''}${label.revoked ? ', revoked' : ''}`;
}

/**
 * The chart's series, busiest key first (the order of `usage.keys`), and each key's colour so the
 * totals table can show the same swatch.
 */
export function chartSeries(
  usage: UsageByKey,
  keys: ReadonlyMap<string, ApiKeyRow>,
): { series: ChartSeries[]; colourOf: Map<string | null, string> } {
  const series: ChartSeries[] = [];
  const colourOf = new Map<string | null, string>();
  usage.keys.slice(0, NAMED_SERIES).forEach((key, i) => {
    const colour = `usage-s${i}`;
    colourOf.set(key.apiKeyId, colour);
    series.push({ colour, label: keyLabel(key.apiKeyId, keys), keyCount: 1, perDay: key.perDay, total: key.total });
  });
  const rest = usage.keys.slice(NAMED_SERIES);
  if (rest.length > 0) {
    const other: ChartSeries = {
      colour: OTHER_COLOUR,
      label: { name: 'Other keys', prefix: null, revoked: false },
      keyCount: rest.length,
      perDay: usage.days.map(noOutcomes),
      total: noOutcomes(),
    };
    for (const key of rest) {
      colourOf.set(key.apiKeyId, OTHER_COLOUR);
      key.perDay.forEach((cell, i) => addOutcomes(other.perDay[i]!, cell));
      addOutcomes(other.total, key.total);
    }
    series.push(other);
  }
  return { series, colourOf };
}

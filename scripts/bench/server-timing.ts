/** The service's Server-Timing headers (docs/performance.md) to figures, with no I/O. */
import { percentile, round } from './stats.js';

/** Median of each stage of the Server-Timing headers (`navigate;dur=52, capture;dur=90`). */
export function serverTimingP50(headers: readonly string[]): Record<string, number> {
  const stages = new Map<string, number[]>();
  for (const header of headers)
    for (const entry of header.split(',')) {
      const m = /^\s*([\w-]+)\s*;\s*dur=([\d.]+)/.exec(entry);
      if (m?.[1] && m[2]) stages.set(m[1], [...(stages.get(m[1]) ?? []), Number(m[2])]);
    }
  return Object.fromEntries([...stages].map(([stage, ms]) => [stage, round(percentile(ms, 50))]));
}

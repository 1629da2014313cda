import { describe, expect, it } from 'vitest';
import { firstPeriod, periodContaining } from '../../server/src/store/billing-period.js';

const at = (iso: string) => Date.parse(iso);

describe('monthly billing periods', () => {
  it('a first period lasts one calendar month', () => {
    expect(firstPeriod(at('2026-01-15T10:00:00Z'))).toEqual({ start: at('2026-01-15T10:00:00Z'), end: at('2026-02-15T10:00:00Z') });
  });

  it('clamps to the end of shorter months', () => {
    expect(firstPeriod(at('2026-01-31T00:00:00Z')).end).toBe(at('2026-02-28T00:00:00Z'));
  });

  it('keeps the current period while it lasts', () => {
    const current = { start: at('2026-01-01T00:00:00Z'), end: at('2026-02-01T00:00:00Z') };
    expect(periodContaining(current, at('2026-01-31T23:59:59Z'))).toBe(current);
  });

  it('the next period starts exactly where the last ended', () => {
    const current = { start: at('2026-01-01T00:00:00Z'), end: at('2026-02-01T00:00:00Z') };
    expect(periodContaining(current, at('2026-02-01T00:00:00Z'))).toEqual({
      start: at('2026-02-01T00:00:00Z'),
      end: at('2026-03-01T00:00:00Z'),
    });
  });

  it('skips months nobody used', () => {
    const current = { start: at('2026-01-01T00:00:00Z'), end: at('2026-02-01T00:00:00Z') };
    expect(periodContaining(current, at('2026-05-10T00:00:00Z'))).toEqual({
      start: at('2026-05-01T00:00:00Z'),
      end: at('2026-06-01T00:00:00Z'),
    });
  });
});

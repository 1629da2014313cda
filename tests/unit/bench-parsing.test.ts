import { describe, expect, it } from 'vitest';
import { findString, parseJsonOutput } from '../../scripts/bench/cli-output.js';
import { serverTimingP50 } from '../../scripts/bench/server-timing.js';

/** What the bench reads from the service's answers and its CLI (scripts/bench/server-timing.ts, cli-output.ts). */
describe('bench Server-Timing', () => {
  it('takes the median of each stage over the answers, rounded to a tenth', () => {
    expect(
      serverTimingP50([
        'navigate;dur=52, capture;dur=90.04, encode;dur=12',
        'navigate;dur=48,capture;dur=110',
        // The service writes `stage;dur=ms`; a description before the duration is not read.
        'navigate;dur=50.26, capture;desc="png";dur=95',
      ]),
    ).toEqual({ navigate: 50.3, capture: 90, encode: 12 });
  });

  it('skips entries without a duration, and empty headers', () => {
    expect(serverTimingP50(['cache;desc=miss, total;dur=7', ''])).toEqual({ total: 7 });
    expect(serverTimingP50([])).toEqual({});
  });
});

describe('bench CLI output', () => {
  it('reads the JSON the CLI printed, or its last JSON line among log lines', () => {
    expect(parseJsonOutput('  {"data":{"id":"org_1"}}\n')).toEqual({ data: { id: 'org_1' } });
    expect(parseJsonOutput('migrating…\n{"first":1}\n{"key":"dg_abc"}\nwarning: something')).toEqual({ key: 'dg_abc' });
    expect(() => parseJsonOutput('no json here')).toThrow(/^no JSON in output: no json here$/);
  });

  it('finds a property depth first, numbers as strings, and gives up past five levels', () => {
    expect(findString({ data: { organization: { id: 'org_1' }, id: 'outer' } }, 'id')).toBe('outer');
    expect(findString({ data: [{ name: 'x' }, { id: 42 }] }, 'id')).toBe('42');
    expect(findString({ a: { b: { c: { d: { e: { f: { id: 'deep' } } } } } } }, 'id')).toBeUndefined();
    expect(findString({ a: { b: { c: { d: { e: { id: 'five' } } } } } }, 'id')).toBe('five');
    expect(findString('id', 'id')).toBeUndefined();
    expect(findString({ id: null }, 'id')).toBeUndefined();
  });
});

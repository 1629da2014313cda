import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { mib, ms, pass, ratio } from '../../scripts/bench/report.js';
import { colourClose, percentile, pixelsAt, round, summarize } from '../../scripts/bench/stats.js';

/** The bench's numbers (scripts/bench/stats.ts) and the units its reports print them in (report.ts). */
describe('bench statistics', () => {
  it('takes the nearest-rank percentile, whatever the order of the samples', () => {
    const samples = [40, 15, 50, 35, 20];
    expect(percentile(samples, 0)).toBe(15);
    expect(percentile(samples, 30)).toBe(20);
    expect(percentile(samples, 40)).toBe(20);
    expect(percentile(samples, 50)).toBe(35);
    expect(percentile(samples, 95)).toBe(50);
    expect(percentile(samples, 100)).toBe(50);
    expect(samples).toEqual([40, 15, 50, 35, 20]);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarizes latencies and the throughput over the wall time', () => {
    expect(summarize([400, 100, 300, 200], 2000)).toEqual({
      n: 4,
      p50Ms: 200,
      p95Ms: 400,
      minMs: 100,
      maxMs: 400,
      meanMs: 250,
      throughputPerS: 2,
    });
    expect(summarize([10.04, 10.06, 10.05], 7000)).toEqual({
      n: 3,
      p50Ms: 10.1,
      p95Ms: 10.1,
      minMs: 10,
      maxMs: 10.1,
      meanMs: 10.1,
      throughputPerS: 0.429,
    });
    const none = summarize([], 0);
    expect(none.n).toBe(0);
    for (const key of ['p50Ms', 'p95Ms', 'minMs', 'maxMs', 'meanMs', 'throughputPerS'] as const) expect(none[key]).toBeNaN();
  });

  it('rounds to the given digits', () => {
    expect(round(1.25)).toBe(1.3);
    expect(round(2.3456, 3)).toBe(2.346);
    expect(round(1234.5678, 0)).toBe(1235);
  });

  it('reads the colours of a PNG at the given points, rounding them, and none outside the image', () => {
    const png = new PNG({ width: 3, height: 2 });
    const paint = (x: number, y: number, [r, g, b]: number[]) => png.data.set([r!, g!, b!, 255], (y * 3 + x) * 4);
    paint(0, 0, [255, 0, 0]);
    paint(1, 0, [0, 255, 0]);
    paint(2, 1, [10, 20, 30]);
    const bytes = new Uint8Array(PNG.sync.write(png));
    expect(
      pixelsAt(bytes, [
        { x: 0, y: 0 },
        { x: 0.6, y: 0.4 },
        { x: 2, y: 1 },
        { x: 3, y: 0 },
        { x: -1, y: 0 },
      ]),
    ).toEqual([{ r: 255, g: 0, b: 0 }, { r: 0, g: 255, b: 0 }, { r: 10, g: 20, b: 30 }, undefined, undefined]);
  });

  it('compares colours within a tolerance on each channel', () => {
    expect(colourClose({ r: 100, g: 100, b: 100 }, { r: 112, g: 88, b: 100 })).toBe(true);
    expect(colourClose({ r: 100, g: 100, b: 100 }, { r: 113, g: 100, b: 100 })).toBe(false);
    expect(colourClose({ r: 100, g: 100, b: 100 }, { r: 103, g: 100, b: 100 }, 2)).toBe(false);
    expect(colourClose(undefined, { r: 0, g: 0, b: 0 })).toBe(false);
  });

  it('prints milliseconds, MiB, ratios and a verdict, and a dash for what was not measured', () => {
    expect(ms(1234.5)).toBe('1235 ms');
    expect(ms(undefined)).toBe('—');
    expect(ms(Number.NaN)).toBe('—');
    expect(mib(2048)).toBe('2 MiB');
    expect(mib(300 * 1024)).toBe('300 MiB');
    expect(mib(undefined)).toBe('—');
    expect(ratio(1)).toBe('1.00×');
    expect(ratio(0.876)).toBe('0.88×');
    expect(ratio(Number.POSITIVE_INFINITY)).toBe('—');
    expect(ratio(Number.NaN)).toBe('—');
    expect(pass(true)).toBe('PASS');
    expect(pass(false)).toBe('FAIL');
  });
});

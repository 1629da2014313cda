import { describe, expect, it } from 'vitest';
import { buildRows, markdown } from '../../scripts/bench/report.js';
import type { Results } from '../../scripts/bench/results.js';
import { SETTINGS, TARGETS } from '../../scripts/bench/settings.js';

/** The benchmark's verdict rows and its Markdown (scripts/bench/report.ts) on known figures. */

const summary = (p50Ms: number) => ({
  n: 10,
  p50Ms,
  p95Ms: p50Ms + 20,
  minMs: p50Ms - 5,
  maxMs: p50Ms + 30,
  meanMs: p50Ms + 2,
  throughputPerS: 1000 / p50Ms,
});
const resources = { captures: 10, fetchedEveryCapture: 12, resources: 12, missing: [] };

function results(serviceP50: number, servicePng: number, errors = 0): Results {
  return {
    meta: {
      date: '2026-01-02',
      node: 'v20.0.0',
      chromium: 'Chromium 130',
      cpus: 2,
      totalMemMiB: 4096,
      loadAvgStart: 0.5,
      loadAvgEnd: 3.5,
      settings: SETTINGS,
      targets: TARGETS,
      notes: ['a | note'],
    },
    rawFloor: { realistic: { ...summary(200), resources, peakPssKb: 100_000, pngBytesP50: 400_000, cpuSecondsPerCapture: 0.3 } },
    service: {
      latency: { ...summary(serviceP50), errors, statuses: { '200': 10 }, resources, pngBytesP50: servicePng, cpuSecondsPerCapture: 0.35 },
      throughput: [],
    },
    rows: [],
  };
}

describe('bench report', () => {
  it("judges the service's p50 and PNG size against the raw floor's", () => {
    const [latency, size] = buildRows(results(190, 410_000));
    expect(latency).toEqual({
      metric: 'Service p50 latency, realistic.html (sequential)',
      measured:
        '190 ms (p95 210 ms, 0 errors; PNG 410000 B, 0.35 CPU-s/capture) vs raw floor p50 200 ms (PNG 400000 B, 0.3 CPU-s/capture) → 0.95×',
      target: `≤ ${TARGETS.latencyRatioMax} × raw floor p50`,
      status: 'PASS',
    });
    expect(size).toEqual({
      metric: "PNG size, realistic.html (service ÷ Chromium's default encoding of the raw floor)",
      measured: '410000 B ÷ 400000 B → 1.02×',
      target: `≤ ${TARGETS.pngSizeRatioMax}×`,
      status: 'PASS',
    });
  });

  it('fails a slower service, a larger PNG, or a run with errors', () => {
    expect(buildRows(results(220, 410_000))[0]!.status).toBe('FAIL');
    expect(buildRows(results(190, 440_000))[1]!.status).toBe('FAIL');
    expect(buildRows(results(190, 410_000, 1))[0]!.status).toBe('FAIL');
  });

  it('says what was not measured, and why', () => {
    const r = results(190, 410_000);
    r.service = { throughput: [], error: 'did not start\nstack' };
    expect(buildRows(r)[0]).toMatchObject({ measured: 'not measured (service error: did not start)', status: 'FAIL' });
  });

  it('writes the rows as a table under the run facts, escaping pipes, and warns of a loaded machine', () => {
    const r = results(190, 410_000);
    r.rows = [{ metric: 'm | n', measured: '1', target: '2', status: 'info' }];
    const lines = markdown(r).split('\n');
    expect(lines[0]).toBe('# Daguerre benchmark — 2026-01-02');
    expect(lines[2]).toMatch(/^Node v20\.0\.0, Chromium 130, 2 CPUs, 4096 MiB RAM\./);
    expect(lines[2]).toMatch(/Load average \(1 min\) 0\.5 at the start, 3\.5 at the end — other work was running: figures are noisy\.$/);
    expect(lines.slice(4, 7)).toEqual([
      '| metric | measured | target | pass/fail |',
      '| --- | --- | --- | --- |',
      '| m \\| n | 1 | 2 | info |',
    ]);
    expect(lines).toContain('- a | note');
    r.meta.loadAvgEnd = 1;
    expect(markdown(r)).toMatch(/1 at the end\.\n/);
  });
});

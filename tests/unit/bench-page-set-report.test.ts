import { describe, expect, it } from 'vitest';
import { concurrentPlan, orderOfRound } from '../../scripts/bench/page-set-phases.js';
import { pageSetChecks, pageSetMarkdown } from '../../scripts/bench/page-set-report.js';
import type { PageSetPage, PageSetResults, SetConcurrent, SetSequential } from '../../scripts/bench/results.js';
import { PAGE_SET_SETTINGS, PAGE_SET_TARGETS } from '../../scripts/bench/settings.js';

/** The page set's verdicts and tables (scripts/bench/page-set-report.ts) on known figures. */

const sequential = (p50Ms: number, errors = 0): SetSequential => ({
  ok: 15,
  errors,
  p50Ms,
  p95Ms: p50Ms + 10,
  cpuSecondsPerCapture: 0.1,
  peakPssKb: 300 * 1024,
  pngBytesP50: 50_000,
});
const concurrent = (perSecond: number, errors = 0): SetConcurrent => ({
  ok: 16,
  errors,
  perSecond,
  cpuSecondsPerCapture: 0.2,
  machineCpuSecondsPerCapture: 0.25,
  peakPssKb: 600 * 1024,
});
const bytes = (ratio: number) => ({ service: Math.round(1000 * ratio), floor: 1000, ratio });

/** A measured page with the given ratios of the service to the floor. */
function page(
  name: string,
  r: { latency: number; throughput: number; png: number; jpeg: number; webp: number; errors?: number },
): PageSetPage {
  return {
    page: name,
    path: `/${name}.html`,
    fullPage: false,
    sequential: { service: sequential(100 * r.latency, r.errors), floor: sequential(100), p50Ratio: r.latency },
    concurrent: { service: concurrent(4 * r.throughput), floor: concurrent(4), ratio: r.throughput },
    bytes: { png: bytes(r.png), jpeg: bytes(r.jpeg), webp: bytes(r.webp) },
    serverTimingP50: { render: 80, encode: 12 },
    notes: [],
  };
}

const GOOD = [
  page('text', { latency: 0.9, throughput: 1.2, png: 1.02, jpeg: 0.8, webp: 0.9 }),
  page('photo', { latency: 0.95, throughput: 1.1, png: 0.9, jpeg: 0.7, webp: 0.6 }),
];

describe('bench page set report', () => {
  it('passes every target when every page meets it, naming the worst page', () => {
    const rows = pageSetChecks(GOOD);
    expect(rows.map((row) => row.status)).toEqual(['PASS', 'PASS', 'PASS', 'PASS', 'PASS', 'PASS', 'PASS']);
    expect(rows[0]).toEqual({
      metric: 'Sequential p50, service ÷ floor',
      measured: 'worst 0.95× (photo)',
      target: `≤ ${PAGE_SET_TARGETS.latencyRatioMax}× on each page`,
      status: 'PASS',
    });
    // Throughput: the lower the worse.
    expect(rows[1]!.measured).toBe('worst 1.10× (photo)');
    expect(rows[2]!.measured).toBe('worst 1.02× (text)');
    // The median of two is the lower (nearest rank).
    expect(rows[3]).toMatchObject({ measured: '0.90× over 2 pages', status: 'PASS' });
    expect(rows[4]!.metric).toBe(`JPEG q${PAGE_SET_SETTINGS.lossyQuality} bytes, service ÷ floor`);
    expect(rows[6]).toEqual({ metric: 'Failed captures (service and floor)', measured: '0', target: '0', status: 'PASS' });
  });

  it('fails a target missed on one page, or not measured on one, and counts failed captures', () => {
    const pages = [
      ...GOOD,
      page('slow', { latency: 1.3, throughput: 0.8, png: 1.2, jpeg: 1.1, webp: 0.9, errors: 2 }),
      { page: 'broken', path: '/broken.html', fullPage: false, notes: [], error: 'timeout' },
    ];
    const rows = pageSetChecks(pages);
    expect(rows.map((row) => row.status)).toEqual(['FAIL', 'FAIL', 'FAIL', 'FAIL', 'FAIL', 'FAIL', 'FAIL']);
    expect(rows[0]!.measured).toBe('worst 1.30× (slow); missed on slow 1.30×; not measured on broken');
    expect(rows[1]!.measured).toBe('worst 0.80× (slow); missed on slow 0.80×; not measured on broken');
    expect(rows[3]!.measured).toBe('1.02× over 3 pages');
    // A tie names the first page of the two.
    expect(rows[5]!.measured).toBe('worst 0.90× (text); not measured on broken');
    expect(rows[6]!.measured).toBe('2');
    expect(pageSetChecks([])[0]).toMatchObject({ measured: 'nothing measured', status: 'FAIL' });
  });

  it('writes one table row per page, a failed page with its error, and the checks', () => {
    const results: PageSetResults = {
      settings: PAGE_SET_SETTINGS,
      targets: PAGE_SET_TARGETS,
      floorBrowser: 'HeadlessChrome/130',
      pages: [
        page('text', { latency: 1.2, throughput: 1.2, png: 1.02, jpeg: 0.8, webp: 0.9 }),
        { page: 'broken|page', path: '/b', fullPage: false, notes: ['fetched\nmore'], error: 'timeout' },
      ],
      memoryPerOrganization: { oneKb: 200 * 1024, fourKb: 260 * 1024, perOrganizationMiB: 20, processesOne: 6, processesFour: 9 },
      checks: [{ metric: 'm', measured: 'x|y', target: 't', status: 'PASS' }],
    };
    const lines = pageSetMarkdown(results).split('\n');
    expect(lines).toContain(
      '| text | 120 / 130 | 100 / 110 | 1.20× ✗ | 0.1 / 0.1 | 300 MiB / 300 MiB | 1020 / 1000 | 1.02× | 12 | 0.80× | 0.90× |',
    );
    expect(lines).toContain('| broken\\|page | timeout |  |  |  |  |  |  |  |  |  |');
    expect(lines).toContain('| text | 4.8 | 4 | 1.20× | 0.2 / 0.2 | 0.25 / 0.25 | 600 MiB / 600 MiB | 0 / 0 |');
    expect(lines).toContain(
      '- Memory per organization for the context pool: 20 MiB per organization (service tree 200 MiB with one organization, 260 MiB after 4 organizations captured once each; 6 → 9 processes).',
    );
    expect(lines).toContain('- Service Server-Timing p50 (ms), sequential: text: render 80, encode 12.');
    expect(lines).toContain('- broken\\|page: fetched more');
    expect(lines.at(-1)).toBe('| m | x\\|y | t | PASS |');
    // No browserless: no section of its own.
    expect(lines.some((line) => line.includes('browserless p50'))).toBe(false);
  });
});

describe('bench page set rounds', () => {
  it('gives every order of the contenders in turn', () => {
    expect([0, 1, 2].map((i) => orderOfRound(['A', 'B'], i))).toEqual([
      ['A', 'B'],
      ['B', 'A'],
      ['A', 'B'],
    ]);
    expect([0, 1, 2, 3, 4, 5, 6].map((i) => orderOfRound(['A', 'B', 'C'], i).join(''))).toEqual([
      'ABC',
      'ACB',
      'BAC',
      'BCA',
      'CAB',
      'CBA',
      'ABC',
    ]);
  });

  it('plans whole laps of the 4 loops, at least two, over one round per order', () => {
    expect(concurrentPlan(2, 16)).toEqual({ rounds: 2, perRound: 8 });
    expect(concurrentPlan(2, 40)).toEqual({ rounds: 2, perRound: 20 });
    expect(concurrentPlan(3, 16)).toEqual({ rounds: 6, perRound: 8 });
    expect(concurrentPlan(3, 100)).toEqual({ rounds: 6, perRound: 20 });
  });
});

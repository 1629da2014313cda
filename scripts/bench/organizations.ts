/**
 * What Chromium's sandbox and the one-organization-per-renderer rule cost.
 *   - the sandbox: the raw floor (one puppeteer page, goto + screenshot) with Chromium's sandbox on,
 *     as the service runs it, and with --no-sandbox, one after the other on the same page;
 *   - the rule: the service's sequential p50 with one organization, and with captures alternating
 *     between four (each capture then gets a fresh context instead of a warm one), and throughput at
 *     concurrency 4 in both cases.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchRaw, rawCapture } from './baselines.js';
import { REPO_ROOT } from './make-fixtures.js';
import { startService, timedGet } from './service.js';
import { nowMs, percentile, round } from './stats.js';

const N = Number(process.env.BENCH_ORGS_N ?? 30);
const THROUGHPUT_REQUESTS = Number(process.env.BENCH_THROUGHPUT_REQUESTS ?? 24);
const WARMUP = 3;

interface Figure {
  p50Ms: number;
  p95Ms: number;
  perSecond: number;
}

function figure(samples: number[], wallMs: number): Figure {
  return {
    p50Ms: round(percentile(samples, 50)),
    p95Ms: round(percentile(samples, 95)),
    perSecond: round((samples.length * 1000) / wallMs, 2),
  };
}

async function rawFloor(url: string, extraArgs: string[]): Promise<Figure> {
  const raw = await launchRaw(extraArgs);
  try {
    for (let i = 0; i < WARMUP; i++) await rawCapture(raw.page, url);
    const samples: number[] = [];
    const start = nowMs();
    for (let i = 0; i < N; i++) samples.push((await rawCapture(raw.page, url)).ms);
    return figure(samples, nowMs() - start);
  } finally {
    await raw.close();
  }
}

export interface OrganizationsResult {
  markdown: string;
  failures: number;
  /** Service throughput at concurrency 4 with four organizations, captures per second. */
  fourOrganizationsPerSecond: number;
  fourOrganizationsP50Ms: number;
}

export async function measureOrganizations(url: string, floorSequentialPerSecond: number): Promise<OrganizationsResult> {
  const sandboxed = await rawFloor(url, []);
  const unsandboxed = await rawFloor(url, ['--no-sandbox']);

  const dataDir = await mkdtemp(join(tmpdir(), 'daguerre-bench-orgs-'));
  const service = await startService({ repoRoot: REPO_ROOT, dataDir, credits: 1_000_000 });
  let failures = 0;
  let firstFailure = '';
  try {
    // One at a time: `org create` makes a plan per credit amount, and two at once would race for it.
    const keys = [service.apiKey];
    for (const n of [2, 3, 4]) keys.push(await service.createKey(1_000_000, `bench organization ${n}`));
    /** Milliseconds of a successful capture; failures are counted and left out of the figures. */
    const capture = async (key: string): Promise<number[]> => {
      const result = await timedGet(`${service.origin}/capture?url=${encodeURIComponent(url)}&apiKey=${encodeURIComponent(key)}`);
      if (result.status === 200) return [result.ms];
      failures++;
      firstFailure ||= `${result.status} ${result.error ?? Buffer.from(result.body).toString('utf8').slice(0, 200)}\n${service.outputTail()}`;
      return [];
    };
    for (let i = 0; i < WARMUP; i++) for (const key of keys) await capture(key);

    const sequential = async (organizations: number): Promise<Figure> => {
      const samples: number[] = [];
      const start = nowMs();
      for (let i = 0; i < N; i++) samples.push(...(await capture(keys[i % organizations]!)));
      return figure(samples, nowMs() - start);
    };
    const concurrent = async (organizations: number): Promise<Figure> => {
      const samples: number[] = [];
      let next = 0;
      const start = nowMs();
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < THROUGHPUT_REQUESTS) {
            const i = next++;
            samples.push(...(await capture(keys[i % organizations]!)));
          }
        }),
      );
      return figure(samples, nowMs() - start);
    };
    const oneSequential = await sequential(1);
    const fourSequential = await sequential(4);
    const oneConcurrent = await concurrent(1);
    const fourConcurrent = await concurrent(4);

    const ratio = (a: number, b: number) => round(a / b, 2);
    const rows = [
      `| raw floor, Chromium sandbox on (as the service runs it) | ${sandboxed.p50Ms} | ${sandboxed.p95Ms} | ${sandboxed.perSecond} |`,
      `| raw floor, --no-sandbox | ${unsandboxed.p50Ms} | ${unsandboxed.p95Ms} | ${unsandboxed.perSecond} |`,
      `| service, 1 organization, sequential | ${oneSequential.p50Ms} | ${oneSequential.p95Ms} | ${oneSequential.perSecond} |`,
      `| service, 4 organizations alternating, sequential | ${fourSequential.p50Ms} | ${fourSequential.p95Ms} | ${fourSequential.perSecond} |`,
      `| service, 1 organization, concurrency 4 | ${oneConcurrent.p50Ms} | ${oneConcurrent.p95Ms} | ${oneConcurrent.perSecond} |`,
      `| service, 4 organizations alternating, concurrency 4 | ${fourConcurrent.p50Ms} | ${fourConcurrent.p95Ms} | ${fourConcurrent.perSecond} |`,
    ];
    const markdown = [
      `${N} sequential captures (${THROUGHPUT_REQUESTS} at concurrency 4) of realistic.html, 1920×1080 PNG.`,
      '',
      '| setup | p50 ms | p95 ms | captures/s |',
      '|---|---|---|---|',
      ...rows,
      '',
      `- cost of the sandbox (raw floor, on vs off): ${round(sandboxed.p50Ms - unsandboxed.p50Ms)} ms at p50 (${ratio(sandboxed.p50Ms, unsandboxed.p50Ms)}×)`,
      `- cost of one organization per renderer (service sequential, 4 organizations vs 1): ${round(fourSequential.p50Ms - oneSequential.p50Ms)} ms at p50 (${ratio(fourSequential.p50Ms, oneSequential.p50Ms)}×); at concurrency 4: ${fourConcurrent.perSecond} vs ${oneConcurrent.perSecond} captures/s`,
      `- service p50 with 4 organizations vs the raw floor (sandboxed): ${ratio(fourSequential.p50Ms, sandboxed.p50Ms)}× (target ≤ 1.15×, at least ≤ 1.35×)`,
      `- throughput at concurrency 4 with 4 organizations vs the floor's sequential rate (${floorSequentialPerSecond}/s): ${ratio(fourConcurrent.perSecond, floorSequentialPerSecond)}× (target ≥ 1×)`,
      failures > 0 ? `- ${failures} captures failed, the first: ${firstFailure}` : '',
    ].join('\n');
    return { markdown, failures, fourOrganizationsPerSecond: fourConcurrent.perSecond, fourOrganizationsP50Ms: fourSequential.p50Ms };
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

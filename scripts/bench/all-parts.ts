/**
 * `npm run bench`: every part of the benchmark, one after the other, each in its own process (a
 * part's Chromium and servers are gone before the next starts). A part that misses a target does
 * not stop the others: each part's result is printed at the end, and the run fails if any failed.
 */
import { spawnSync } from 'node:child_process';

const PARTS: Array<{ name: string; script: string }> = [
  { name: 'captures, organizations, filters, dead hosts, full pages, page set', script: 'scripts/bench.ts' },
  { name: 'async jobs', script: 'scripts/bench/async-jobs.ts' },
  { name: 'video', script: 'scripts/bench/video.ts' },
  { name: 'cold start', script: 'scripts/bench/cold-start.ts' },
  { name: 'request log', script: 'scripts/bench/request-log.ts' },
];

const outcomes = PARTS.map((part) => {
  process.stdout.write(`\n=== bench: ${part.name} (${part.script})\n`);
  const started = Date.now();
  const run = spawnSync(process.execPath, ['--import', 'tsx', part.script], { stdio: 'inherit' });
  const seconds = Math.round((Date.now() - started) / 1000);
  const status = run.status === 0 ? 'met' : run.signal ? `killed by ${run.signal}` : `missed (exit ${run.status ?? '?'})`;
  return { ...part, status, seconds };
});

process.stdout.write('\n=== bench: every part\n');
for (const outcome of outcomes)
  process.stdout.write(`${outcome.status.padEnd(18)} ${String(outcome.seconds).padStart(5)} s  ${outcome.name}\n`);
process.exitCode = outcomes.every((outcome) => outcome.status === 'met') ? 0 : 1;

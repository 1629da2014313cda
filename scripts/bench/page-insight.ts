/**
 * What the page readers (docs/page-insight.md) cost per capture (`npx tsx
 * scripts/bench/page-insight.ts`).
 *
 * Starts the service in process (tests/helpers/test-service.ts: a fresh SQLite, the real browser
 * pool, one capture at a time) and a fixture server on loopback, then captures the article fixture
 * and four real saved pages (tests/fixtures/pages/insight/real) as a 1920×1080 viewport and as a
 * 1280-wide full page, with metadata off and on, and reads the Server-Timing stage `insight`: the
 * quality report alone (metadata off) and with the metadata (on). Prints the median, min and max.
 *
 * Environment: BENCH_INSIGHT_N=3 rounds over the pages.
 */
import { FixtureServer } from '../../tests/helpers/fixture-server.js';
import { startTestService } from '../../tests/helpers/test-service.js';

const N = Number(process.env.BENCH_INSIGHT_N ?? 3);
if (!Number.isInteger(N) || N < 1 || N > 100)
  throw new Error(`BENCH_INSIGHT_N must be a whole number from 1 to 100 (got ${process.env.BENCH_INSIGHT_N})`);
const PAGES = [
  'insight/article.html',
  'insight/real/bbc-1.html',
  'insight/real/wikipedia.html',
  'insight/real/nytimes-1.html',
  'insight/real/qq.html',
];
const VARIANTS = [
  { name: 'viewport 1920×1080', params: '' },
  { name: 'full page, 1280 wide', params: '&fullPage=true&viewportWidth=1280&viewportHeight=800' },
];

const stage = (header: string | null, name: string) => Number(new RegExp(`(?:^|, )${name};dur=(\\d+)`).exec(header ?? '')?.[1] ?? NaN);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const fixtures = await new FixtureServer().start();
const service = await startTestService({ env: { RATE_LIMIT_MAX: '100000', MAX_CONCURRENCY: '1' }, credits: 1_000_000 });
try {
  console.log('| capture | metadata | insight median ms | min | max | capture median ms | n |\n|---|---|---|---|---|---|---|');
  for (const variant of VARIANTS) {
    for (const metadata of [false, true]) {
      const insight: number[] = [];
      const capture: number[] = [];
      for (let round = 0; round < N; round++) {
        for (const page of PAGES) {
          const response = await service.get(
            `/capture?url=${encodeURIComponent(`${fixtures.url}/${page}`)}${variant.params}&metadata=${metadata}&apiKey=${service.apiKey}`,
          );
          await response.arrayBuffer();
          if (response.status !== 200) throw new Error(`${page}: HTTP ${response.status}`);
          insight.push(stage(response.headers.get('server-timing'), 'insight'));
          capture.push(stage(response.headers.get('server-timing'), 'capture'));
        }
      }
      console.log(
        `| ${variant.name} | ${metadata} | ${median(insight)} | ${Math.min(...insight)} | ${Math.max(...insight)} | ${median(capture)} | ${insight.length} |`,
      );
    }
  }
} finally {
  await service.stop();
  await fixtures.stop();
}

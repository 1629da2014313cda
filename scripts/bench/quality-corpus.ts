/**
 * False alarms of the capture quality report on a corpus (`npx tsx scripts/bench/quality-corpus.ts`):
 * the 14 real saved pages of tests/fixtures/pages/insight/real plus clean fixture pages, each as a
 * 1280×800 viewport, a 1280-wide full page and an iPhone 15; prints every finding and, per variant,
 * how many pages had one. Starts the service in process (tests/helpers/test-service.ts).
 */
import { readdirSync } from 'node:fs';
import { FixtureServer } from '../../tests/helpers/fixture-server.js';
import { startTestService } from '../../tests/helpers/test-service.js';
const fixtures = await new FixtureServer().start();
const service = await startTestService({ env: { RATE_LIMIT_MAX: '10000' }, credits: 100000 });
const real = readdirSync('tests/fixtures/pages/insight/real')
  .filter((n) => n.endsWith('.html') && !n.endsWith('.expected.html'))
  .map((n) => `insight/real/${n}`);
const clean = [
  'insight/article.html',
  'insight/app-shell.html',
  'insight/svg-image.html',
  'long.html',
  'tall.html',
  'lazy.html',
  'device.html',
  'theme.html',
  'glyphs.html',
  'bands.html',
];
const variants: Array<[string, Record<string, unknown>]> = [
  ['viewport 1280x800', { viewportWidth: 1280, viewportHeight: 800 }],
  ['fullPage 1280', { viewportWidth: 1280, viewportHeight: 800, fullPage: true }],
  ['iphone-15', { device: 'iphone-15' }],
];
for (const [name, extra] of variants) {
  let alarms = 0;
  let total = 0;
  for (const page of [...real, ...clean]) {
    try {
      const result = await service.client.captureJson({ url: `${fixtures.url}/${page}`, ...extra } as never);
      total++;
      if (!result.data.quality.ok) {
        alarms++;
        console.log(`  ${name} ${page}: ${result.data.quality.findings.map((f) => `${f.check}: ${f.message.slice(0, 160)}`).join(' | ')}`);
      }
    } catch (error) {
      console.log(`  ${name} ${page}: error ${(error as Error).message}`);
    }
  }
  console.log(`${name}: ${alarms} of ${total} pages with a finding`);
}
await service.stop();
await fixtures.stop();

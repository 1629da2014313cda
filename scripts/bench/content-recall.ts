/**
 * How much of the article format=markdown keeps, on real saved pages it was not written for
 * (docs/page-insight.md, "How the article is chosen"):
 *
 *   npx tsx --conditions=daguerre-source scripts/bench/content-recall.ts <checkout of postlight/parser> [--only <text>] [--no-service]
 *
 * (the condition makes @daguerre/client resolve to its sources, as in the tests; --only keeps the
 * pages whose file name holds the text, --no-service measures the variants alone)
 * The pages are the `fixtures/*.html` of the Mercury parser's repository, read from the given
 * checkout with git (never copied here) and served offline by a fixture server on loopback. The
 * reference is Mercury's own extraction (its browser build, mercury-reference.ts) with the URL each
 * page was saved from, so the site's hand-written extractor chooses the article. For each page:
 *  - the service (in process, tests/helpers/test-service.ts) captures it with format=markdown, the
 *    real code path: its recall (share of the reference's words in the Markdown) and precision
 *    (share of the Markdown's words in the reference, so that "the whole page" does not win);
 *  - the same figures for each way of choosing the article (content-variants.ts) on the HTML the
 *    service's markdown path serializes, with the extractor chosen and the time taken: Readability
 *    alone is the code before the fallbacks;
 *  - whether the first words of the article its test expects (hand-written) are in the Markdown.
 * Prints the summary tables and writes them with per-page figures to .bench/content-recall.{md,json}.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FixtureServer } from '../../tests/helpers/fixture-server.js';
import { startTestService } from '../../tests/helpers/test-service.js';
import { launchRaw } from './baselines.js';
import { differences, scorePage, summarize, summaryTable, type PageScore } from './content-recall-report.js';
import { runVariant, serializedPage, VARIANTS } from './content-variants.js';
import { listMercuryFixtures, showFile, type MercuryFixture } from './mercury-fixtures.js';
import { mercuryReference } from './mercury-reference.js';
import { REPO_ROOT } from './make-fixtures.js';

const args = process.argv.slice(2);
const repo = args.find((arg) => !arg.startsWith('--') && args[args.indexOf(arg) - 1] !== '--only');
if (!repo || !existsSync(repo))
  throw new Error(
    'Usage: npx tsx --conditions=daguerre-source scripts/bench/content-recall.ts <checkout of postlight/parser> [--only <text>] [--no-service]',
  );
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const withService = !args.includes('--no-service');

const OUT = join(REPO_ROOT, '.bench');
mkdirSync(OUT, { recursive: true });
const fixtures = listMercuryFixtures(repo).filter((fixture) => !only || fixture.file.includes(only));
console.log(`${fixtures.length} saved pages with a URL in their test`);

const server = await new FixtureServer().start();
for (const fixture of fixtures) {
  // The saved bytes as they are; the page's own <meta charset> tells Chromium how to read them.
  server.route(`/mercury/${fixture.file}`, (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(fixture.html));
}
const pageUrl = (fixture: MercuryFixture) => `${server.url}/mercury/${fixture.file}`;
const raw = await launchRaw();

try {
  // Mercury's answers change only with the checkout: kept beside the figures between runs.
  const bundleHash = createHash('sha256').update(showFile(repo, 'dist/mercury.web.js')).digest('hex');
  const cachePath = join(OUT, 'content-recall-reference.json');
  const cache: Record<string, string | null> = (() => {
    try {
      const saved = JSON.parse(readFileSync(cachePath, 'utf8')) as { bundleHash: string; texts: Record<string, string | null> };
      return saved.bundleHash === bundleHash ? saved.texts : {};
    } catch {
      return {};
    }
  })();
  const mercury = mercuryReference(repo, raw.browser);
  const references = new Map<string, string>();
  for (const fixture of fixtures) {
    const key = `${fixture.file} ${createHash('sha256').update(fixture.html).digest('hex')}`;
    if (!(key in cache)) cache[key] = await mercury.text(fixture.url, fixture.text).catch(() => null);
    const text = cache[key];
    if (text) references.set(fixture.file, text);
  }
  writeFileSync(cachePath, JSON.stringify({ bundleHash, texts: cache }));
  const judged = fixtures.filter((fixture) => references.has(fixture.file));
  console.log(`${judged.length} with an article from Mercury (the reference); the others are left out`);

  const variantScores = new Map<string, PageScore[]>(VARIANTS.map((variant) => [variant.name, []]));
  const shippedMarkdown = new Map<string, string>();
  for (const fixture of judged) {
    const html = await serializedPage(raw.browser, pageUrl(fixture));
    if (html === null) {
      console.log(`${fixture.file}: did not load in the bench's browser`);
      continue;
    }
    for (const variant of VARIANTS) {
      const run = runVariant(html, pageUrl(fixture), variant);
      const score = scorePage(fixture.file, run.markdown, references.get(fixture.file)!, fixture.expectedStart);
      variantScores.get(variant.name)!.push({ ...score, extractor: run.extractor, firstVerdict: run.firstVerdict, ms: run.ms });
      if (variant === VARIANTS[VARIANTS.length - 1]) shippedMarkdown.set(fixture.file, run.markdown);
    }
  }

  const serviceScores: PageScore[] = [];
  let sameAsShipped = 0;
  let failed = 0;
  if (withService) {
    const service = await startTestService({ env: { RATE_LIMIT_MAX: '100000', MAX_CONCURRENCY: '2' }, credits: 1_000_000 });
    try {
      for (const fixture of judged) {
        const markdown = await service.client
          .captureJson({ url: pageUrl(fixture), format: 'markdown', viewportWidth: 1280, viewportHeight: 800 })
          .then((result) => result.data.content ?? '')
          .catch((error: unknown) => {
            console.log(`${fixture.file}: the service answered ${String(error).slice(0, 200)}`);
            failed += 1;
            return '';
          });
        serviceScores.push(scorePage(fixture.file, markdown, references.get(fixture.file)!, fixture.expectedStart));
        if (markdown === shippedMarkdown.get(fixture.file)) sameAsShipped += 1;
      }
    } finally {
      await service.stop();
    }
  }

  const summaries = [
    ...(withService ? [summarize('service, format=markdown (real path)', serviceScores)] : []),
    ...VARIANTS.map((variant) => summarize(variant.name, variantScores.get(variant.name)!)),
  ];
  const before = variantScores.get(VARIANTS[0]!.name)!;
  const shipped = variantScores.get(VARIANTS[VARIANTS.length - 1]!.name)!;
  const verdicts = shipped.reduce<Record<string, number>>((counts, score) => {
    const key = `${score.firstVerdict ?? 'looked right'} → ${score.extractor}`;
    counts[key] = (counts[key] ?? 0) + 1;
    return counts;
  }, {});
  const report = [
    `# Content recall against Mercury's extraction (${judged.length} saved pages of postlight/parser)`,
    '',
    summaryTable(summaries),
    '',
    withService
      ? `The service's Markdown is byte-identical to the shipped variant's on ${sameAsShipped} of ${serviceScores.length} pages; ${failed} captures failed (counted as recall 0, precision 0).`
      : '',
    '',
    `Readability's article judged → article used: ${JSON.stringify(verdicts)}`,
    '',
    '## Pages that changed (Readability alone → shipped)',
    '',
    differences(before, shipped),
  ].join('\n');
  console.log(report);
  writeFileSync(join(OUT, 'content-recall.md'), `${report}\n`);
  writeFileSync(
    join(OUT, 'content-recall.json'),
    JSON.stringify({ summaries, service: serviceScores, variants: Object.fromEntries(variantScores) }, null, 1),
  );
} finally {
  await raw.close();
  await server.stop();
}

/**
 * Article metadata scored against hand-written answers: the Mercury parser's (postlight/parser)
 * custom extractor tests each name a saved page (fixtures/*.html), its URL and the title, author
 * and date_published a person wrote down for it. This script reads them from a checkout of that
 * repository (not copied into this one), serves every page on loopback with all other network
 * blocked, reads Daguerre's article metadata in real Chromium with the service's own code
 * (article-signals.ts in the page, article-metadata.ts on its output), runs metascraper on the same
 * HTML, and prints how many of each field each one got exactly.
 *
 *   npx tsx scripts/bench/metadata-score.ts <path to a postlight/parser git checkout> [--details out.json] [--misses]
 *
 * Exact: the same string after trimming both (titles, authors); the same instant (dates). Answers
 * the tests write as null are not counted. `--misses` prints every value Daguerre got wrong;
 * `--details` writes every case with both tools' values.
 */
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import metascraper from 'metascraper';
import metascraperAuthor from 'metascraper-author';
import metascraperDate from 'metascraper-date';
import metascraperDescription from 'metascraper-description';
import metascraperTitle from 'metascraper-title';
import { articleMetadata } from '../../server/src/capture/insight/article-metadata.js';
import { readArticleSignals, type ArticleSignals } from '../../server/src/capture/insight/article-signals.js';
import { launchRaw } from './baselines.js';

const FIELDS = ['title', 'author', 'date_published'] as const;
type Field = (typeof FIELDS)[number];
type Answers = Record<Field, string | null>;

interface Case {
  test: string;
  url: string;
  fixture: string;
  expected: Partial<Answers>;
}

const args = process.argv.slice(2);
const repo = args.find((arg) => !arg.startsWith('--') && args[args.indexOf(arg) - 1] !== '--details');
const detailsFile = args.includes('--details') ? args[args.indexOf('--details') + 1] : undefined;
if (!repo) {
  console.error('usage: npx tsx scripts/bench/metadata-score.ts <path to a postlight/parser git checkout> [--details out.json] [--misses]');
  process.exit(2);
}
const git = (...command: string[]) => execFileSync('git', ['-C', repo, ...command], { maxBuffer: 256 * 1024 * 1024 });

/** A JavaScript string literal's value ('…', "…" or `…` without substitutions). */
function literal(source: string): string {
  const body = source.slice(1, -1);
  return body.replace(/\\(u\{[0-9a-f]+\}|u[0-9a-f]{4}|x[0-9a-f]{2}|[\s\S])/gi, (_, escape: string) => {
    if (/^u\{/i.test(escape)) return String.fromCodePoint(parseInt(escape.slice(2, -1), 16));
    if (/^[ux]/i.test(escape) && escape.length > 1) return String.fromCharCode(parseInt(escape.slice(1), 16));
    return ({ n: '\n', t: '\t', r: '\r', '\n': '' } as Record<string, string>)[escape] ?? escape;
  });
}
const STRING = String.raw`'(?:[^'\\]|\\[\s\S])*'|"(?:[^"\\]|\\[\s\S])*"|\x60(?:[^\x60\\$]|\\[\s\S])*\x60`;

/** The cases of one test file: each readFileSync of a fixture starts one, with the url before it and the asserts after it. */
function casesOf(path: string, source: string): Case[] {
  const starts = [...source.matchAll(/readFileSync\(\s*['"`]\.\/fixtures\/([^'"`]+)['"`]/g)];
  return starts.flatMap((start, i) => {
    const before = source.slice(0, start.index);
    const after = source.slice(start.index, starts[i + 1]?.index ?? source.length);
    const urls = [...before.matchAll(new RegExp(String.raw`\burl\s*=\s*(${STRING})`, 'g'))];
    const url = urls.length ? literal(urls[urls.length - 1]![1]!) : null;
    if (!url) return [];
    const expected: Partial<Answers> = {};
    for (const field of FIELDS) {
      const match = new RegExp(String.raw`assert\.(?:equal|strictEqual)\(\s*${field}\s*,\s*(${STRING}|null)\s*,?\s*\)`).exec(after);
      if (match) expected[field] = match[1] === 'null' ? null : literal(match[1]!);
    }
    return [{ test: path, url, fixture: start[1]!, expected }];
  });
}

const testFiles = git('ls-tree', '-r', '--name-only', 'HEAD')
  .toString()
  .split('\n')
  .filter((path) => /^src\/extractors\/custom\/[^/]+\/index\.test\.js$/.test(path));
const cases = testFiles.flatMap((path) => casesOf(path, git('show', `HEAD:${path}`).toString()));
const pages = new Map(cases.map((c) => [c.fixture, git('show', `HEAD:fixtures/${c.fixture}`)]));

// Every fixture at /<its file name>; nothing else exists.
const server = createServer((request, response) => {
  const page = pages.get(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname.slice(1)));
  if (!page) return void response.writeHead(404).end();
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// The rule set a user of metascraper would start from for an article (the description is not scored).
const scrape = metascraper([metascraperAuthor(), metascraperDate(), metascraperDescription(), metascraperTitle()]);
// The second layer of "offline": a name that is not loopback resolves to nothing.
const raw = await launchRaw(['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1']);
const { page } = raw;
// tsx compiles with esbuild's keepNames, which wraps functions in __name(): the page needs it too.
await page.evaluateOnNewDocument('globalThis.__name = globalThis.__name || ((fn) => fn)');
await page.setRequestInterception(true);
page.on('request', (request) => {
  const url = request.url();
  if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) void request.continue();
  else void request.abort('blockedbyclient');
});

const tally = { daguerre: {} as Record<string, number>, metascraper: {} as Record<string, number>, counted: {} as Record<string, number> };
const details: unknown[] = [];
const misses: string[] = [];
const readMs: number[] = [];
const same = (field: Field, expected: string, actual: string | null | undefined) => {
  if (actual === null || actual === undefined) return false;
  if (field === 'date_published') return Date.parse(expected) === Date.parse(actual);
  return expected.trim() === actual.trim();
};

try {
  for (const c of cases) {
    let ours: Answers & { documentTitle: string | null } = { title: null, author: null, date_published: null, documentTitle: null };
    let signals: ArticleSignals | null = null;
    try {
      await page.goto(`${origin}/${encodeURIComponent(c.fixture)}`, { waitUntil: 'load', timeout: 30_000 });
      const started = performance.now();
      signals = await readArticleSignals(page);
      const article = signals ? articleMetadata(signals) : null;
      readMs.push(performance.now() - started);
      ours = {
        title: article?.articleTitle ?? null,
        author: article?.author ?? null,
        date_published: article?.publishedAt ?? null,
        documentTitle: signals?.documentTitle ?? null,
      };
    } catch (error) {
      console.error(`${c.fixture}: ${(error as Error).message}`);
    }
    const theirs = (await scrape({ url: c.url, html: pages.get(c.fixture)!.toString('utf8') }).catch(() => ({}))) as Record<
      string,
      string | null
    >;
    const theirAnswers: Answers = { title: theirs.title ?? null, author: theirs.author ?? null, date_published: theirs.date ?? null };
    for (const field of FIELDS) {
      const expected = c.expected[field];
      if (expected === undefined || expected === null) continue;
      tally.counted[field] = (tally.counted[field] ?? 0) + 1;
      if (same(field, expected, ours[field])) tally.daguerre[field] = (tally.daguerre[field] ?? 0) + 1;
      else misses.push(`${c.fixture} ${field}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(ours[field])}`);
      if (same(field, expected, theirAnswers[field])) tally.metascraper[field] = (tally.metascraper[field] ?? 0) + 1;
      if (field === 'title' && same(field, expected, ours.documentTitle))
        tally.daguerre.documentTitle = (tally.daguerre.documentTitle ?? 0) + 1;
    }
    details.push({ ...c, daguerre: ours, metascraper: theirAnswers, signals });
  }
} finally {
  await raw.close();
  server.close();
}

if (args.includes('--misses')) console.log(misses.join('\n'));
if (detailsFile) await writeFile(detailsFile, JSON.stringify(details, null, 2));
console.log(
  `Mercury fixtures at ${git('rev-parse', 'HEAD').toString().trim().slice(0, 12)}: ${cases.length} cases from ${testFiles.length} test files`,
);
console.log('| field | answers | Daguerre exact | metascraper exact |\n|---|---|---|---|');
for (const field of FIELDS)
  console.log(`| ${field} | ${tally.counted[field] ?? 0} | ${tally.daguerre[field] ?? 0} | ${tally.metascraper[field] ?? 0} |`);
console.log(`(document.title alone: ${tally.daguerre.documentTitle ?? 0} titles exact)`);
readMs.sort((a, b) => a - b);
console.log(
  `Daguerre's article metadata per page: median ${Math.round(readMs[readMs.length >> 1] ?? 0)} ms, max ${Math.round(readMs[readMs.length - 1] ?? 0)} ms (in the page and after)`,
);

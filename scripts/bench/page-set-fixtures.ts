/**
 * The generated pages of the bench's page set (docs/performance.md), in tests/fixtures/bench/set/:
 *   text.html    what a new user tries first: a nav bar, headings, paragraphs, bordered cards and
 *                buttons in system fonts — flat colours, where an encoder's choice of filter shows;
 *   photo.html   one full-width photographic picture with a caption: noisy pixels, where PNG is at
 *                its slowest and largest;
 *   charts.html  a dashboard of inline SVG charts and a table (page-set-charts.ts);
 *   long.html    a long article (≈ 9 000 px) with a few figures, captured with fullPage;
 *   prose-serif.html, prose-sans.html, plain.html, wiki.html, readme.html  plain text pages
 *                (page-set-plain.ts).
 * Deterministic (seeded PRNG, no clock, no network, no script). The committed files are used as
 * they are; `npx tsx scripts/bench/page-set-fixtures.ts --force` writes them again.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startFixtureServer, type FixtureServer } from './fixture-server.js';
import { buildFixtures, FIXTURE_DIR, pictureNear, REPO_ROOT, TextGen } from './make-fixtures.js';
import { chartsHtml } from './page-set-charts.js';
import { photoNear } from './page-set-photo.js';
import { PLAIN_TEXT_FILES, plainTextPages } from './page-set-plain.js';

/** The set's folder; the fixture server serves it as /set/. */
export const PAGE_SET_DIR = join(FIXTURE_DIR, 'set');

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function textHtml(): string {
  const t = new TextGen(3101);
  const card = (i: number) => `<article class="card">
        <h3>${esc(t.title())}</h3>
        <p>${esc(t.paragraph(2))}</p>
        <div class="actions"><button class="primary">${['Get started', 'Try it', 'Open', 'Learn more', 'Compare', 'Read'][i % 6]}</button><button>Details</button></div>
      </article>`;
  const faq = Array.from(
    { length: 4 },
    () => `<details open><summary>${esc(t.title())}?</summary><p>${esc(t.paragraph(3))}</p></details>`,
  ).join('\n      ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme Cloud — simple hosting for small teams</title>
<style>
  body { margin: 0; font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; color: #1f2933; background: #fff; line-height: 1.5; }
  nav { display: flex; align-items: center; gap: 28px; padding: 0 48px; height: 64px; border-bottom: 1px solid #e4e7eb; }
  nav .brand { font-weight: 700; font-size: 20px; margin-right: auto; }
  nav a { color: #3e4c59; text-decoration: none; }
  nav .cta { background: #2563eb; color: #fff; padding: 8px 16px; border-radius: 6px; }
  .hero { text-align: center; padding: 64px 48px 40px; background: #f5f7fa; border-bottom: 1px solid #e4e7eb; }
  .hero h1 { font-size: 44px; margin: 0 0 12px; }
  .hero p { font-size: 19px; color: #52606d; max-width: 760px; margin: 0 auto 24px; }
  button { font: inherit; padding: 9px 18px; border-radius: 6px; border: 1px solid #cbd2d9; background: #fff; color: #1f2933; cursor: pointer; }
  button.primary { background: #2563eb; border-color: #2563eb; color: #fff; }
  .wrap { max-width: 1200px; margin: 0 auto; padding: 32px 48px; }
  .cards { display: grid; grid-template-columns: repeat(3, 1fr); gap: 24px; }
  .card { border: 1px solid #d9e2ec; border-radius: 8px; padding: 20px 22px; }
  .card h3 { margin: 0 0 8px; font-size: 19px; }
  .card p { margin: 0 0 16px; color: #52606d; }
  .actions { display: flex; gap: 8px; }
  h2 { font-size: 28px; margin: 8px 0 16px; }
  details { border-bottom: 1px solid #e4e7eb; padding: 10px 0; } summary { font-weight: 600; }
  footer { border-top: 1px solid #e4e7eb; padding: 24px 48px; color: #7b8794; font-size: 14px; }
</style>
</head>
<body>
  <nav><span class="brand">Acme Cloud</span><a href="#">Product</a><a href="#">Pricing</a><a href="#">Docs</a><a href="#">Blog</a><a href="#">Sign in</a><a class="cta" href="#">Start free</a></nav>
  <header class="hero">
    <h1>${esc(t.title())}</h1>
    <p>${esc(t.paragraph(2))}</p>
    <button class="primary">Create an account</button> <button>Talk to sales</button>
  </header>
  <main class="wrap">
    <h2>Why teams choose us</h2>
    <div class="cards">
      ${Array.from({ length: 6 }, (_, i) => card(i)).join('\n      ')}
    </div>
    <h2>Questions</h2>
      ${faq}
  </main>
  <footer>© Acme Cloud · ${esc(t.words(6))}</footer>
</body>
</html>
`;
}

function photoHtml(): string {
  const t = new TextGen(3301);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(t.title())}</title>
<style>
  body { margin: 0; font-family: Georgia, 'Times New Roman', serif; color: #f5f5f5; background: #0d0d0d; }
  header { height: 56px; display: flex; align-items: center; padding: 0 40px; font: 600 18px system-ui, sans-serif; letter-spacing: .08em; text-transform: uppercase; }
  figure { margin: 0; position: relative; }
  figure img { display: block; width: 100%; height: auto; }
  figcaption { position: absolute; left: 0; right: 0; bottom: 0; padding: 40px 64px 36px; background: linear-gradient(transparent, rgba(0,0,0,.8)); }
  figcaption h1 { font-size: 52px; margin: 0 0 8px; font-weight: 400; }
  figcaption p { font-size: 20px; margin: 0; max-width: 900px; color: #d4d4d4; }
  article { max-width: 760px; margin: 40px auto; font-size: 19px; line-height: 1.7; color: #d4d4d4; }
</style>
</head>
<body>
  <header>Field notes</header>
  <figure>
    <img src="/set/img/photo.png" width="960" height="480" alt="${esc(t.words(5))}">
    <figcaption><h1>${esc(t.title())}</h1><p>${esc(t.paragraph(2))}</p></figcaption>
  </figure>
  <article><p>${esc(t.paragraph(5))}</p><p>${esc(t.paragraph(5))}</p></article>
</body>
</html>
`;
}

/** Pictures in the long page, one every other section. */
const LONG_FIGURES = 3;

function longHtml(): string {
  const t = new TextGen(3401);
  const parts: string[] = [];
  for (let section = 0; section < 8; section++) {
    parts.push(`<h2>${esc(t.title())}</h2>`);
    for (let p = 0; p < 5; p++) parts.push(`<p>${esc(t.paragraph(t.int(4, 6)))}</p>`);
    if (section % 2 === 1 && section < 2 * LONG_FIGURES) {
      const n = (section + 1) / 2;
      parts.push(
        `<figure><img src="/set/img/figure-${n}.png" width="960" height="420" alt="${esc(t.words(4))}"><figcaption>Figure ${n}. ${esc(t.sentence())}</figcaption></figure>`,
      );
    }
    if (section === 6) parts.push(`<blockquote>${esc(t.paragraph(2))}</blockquote>`);
  }
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(t.title())}</title>
<style>
  body { margin: 0; font-family: Georgia, 'Times New Roman', serif; color: #222; background: #fffdf8; }
  .masthead { border-bottom: 1px solid #e6e1d6; padding: 18px 0; text-align: center; font: 700 22px system-ui, sans-serif; }
  main { max-width: 960px; margin: 0 auto; padding: 24px 0 80px; }
  h1 { font-size: 48px; line-height: 1.15; margin: 32px 0 12px; }
  .byline { font: 15px system-ui, sans-serif; color: #6b6459; margin-bottom: 28px; }
  h2 { font-size: 30px; margin: 48px 0 12px; }
  p { font-size: 20px; line-height: 1.7; margin: 0 0 20px; }
  figure { margin: 36px 0; } figure img { display: block; width: 100%; height: auto; border-radius: 4px; }
  figcaption { font: 14px system-ui, sans-serif; color: #6b6459; margin-top: 8px; }
  blockquote { margin: 36px 0; padding: 8px 28px; border-left: 5px solid #c2410c; font-size: 26px; font-style: italic; }
</style>
</head>
<body>
  <div class="masthead">The Long Read</div>
  <main>
    <h1>${esc(t.title())}</h1>
    <div class="byline">By ${esc(t.words(2))} · ${t.int(12, 25)} min read</div>
    ${parts.join('\n    ')}
  </main>
</body>
</html>
`;
}

function generate(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  files.set('text.html', Buffer.from(textHtml()));
  files.set('photo.html', Buffer.from(photoHtml()));
  // Shown 1920 px wide: twice its size, which keeps the file under 400 KB; the browser's smoothing
  // of the upscaled grain still gives nearly every pixel of the screenshot a colour of its own.
  files.set('img/photo.png', photoNear(960, 480, 3302, 380 * 1024));
  files.set('charts.html', Buffer.from(chartsHtml()));
  files.set('long.html', Buffer.from(longHtml()));
  for (let n = 1; n <= LONG_FIGURES; n++) files.set(`img/figure-${n}.png`, pictureNear(960, 420, 3410 + n, 45 * 1024));
  for (const [name, bytes] of plainTextPages()) files.set(name, bytes);
  return files;
}

export const PAGE_SET_FILES: readonly string[] = [
  'text.html',
  'photo.html',
  'img/photo.png',
  'charts.html',
  'long.html',
  ...Array.from({ length: LONG_FIGURES }, (_, i) => `img/figure-${i + 1}.png`),
  ...PLAIN_TEXT_FILES,
];

/**
 * Writes the set's files. Without `force`, does nothing when they all exist: the committed bytes are
 * the fixture (another zlib could deflate the pictures differently).
 */
/** The bench's fixtures and the page set's, built when missing, served on loopback. */
export async function servePageSetFixtures(): Promise<FixtureServer> {
  await buildFixtures(false);
  await buildPageSetFixtures(false);
  return startFixtureServer();
}

export async function buildPageSetFixtures(force = false): Promise<{ written: boolean }> {
  if (!force && PAGE_SET_FILES.every((f) => existsSync(join(PAGE_SET_DIR, f)))) return { written: false };
  for (const [path, bytes] of generate()) {
    const target = join(PAGE_SET_DIR, path);
    await mkdir(dirname(target), { recursive: true });
    const current = existsSync(target) ? await readFile(target) : undefined;
    if (!current?.equals(bytes)) await writeFile(target, bytes);
  }
  return { written: true };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await buildPageSetFixtures(process.argv.includes('--force'));
  for (const f of PAGE_SET_FILES) console.log(relative(REPO_ROOT, join(PAGE_SET_DIR, f)));
}

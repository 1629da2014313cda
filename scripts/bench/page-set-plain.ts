/**
 * The plain text pages of the bench's page set: text and little else, dark on white, where an
 * encoder's choice shows most (docs/performance.md, "PNG size"). No pictures, no script, no network;
 * seeded text (TextGen), so the files are the same on every build.
 *   prose-serif.html  long paragraphs of a book-like essay in a serif font, black on white;
 *   prose-sans.html   a blog post's paragraphs and subheadings in a sans font, dark grey on white;
 *   plain.html        a plain-text document as Chromium shows a text/plain file: one <pre>, monospace;
 *   wiki.html         an encyclopedia article: side navigation, contents box, headings, blue links on
 *                     every line, an infobox table and numbered references;
 *   readme.html       a project README: headings, lists, links, inline code and grey code blocks.
 */
import { TextGen } from './make-fixtures.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

const page = (title: string, style: string, body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(title)}</title>
<style>
${style}
</style>
</head>
<body>
${body}
</body>
</html>
`;

/** A paragraph of `sentences` with about one word in `every` a link (a reference mark after some sentences when `cite`). */
function linked(t: TextGen, sentences: number, every: number, cite = false): string {
  return Array.from({ length: sentences }, () => {
    const words = t.sentence().split(' ');
    const html = words.map((w) => (t.int(1, every) === 1 ? `<a href="#${w.replace(/\W/g, '')}">${esc(w)}</a>` : esc(w))).join(' ');
    return cite && t.int(1, 3) === 1 ? `${html}<sup><a href="#cite">[${t.int(1, 40)}]</a></sup>` : html;
  }).join(' ');
}

function proseSerifHtml(): string {
  const t = new TextGen(3501);
  const paragraphs = Array.from({ length: 14 }, () => `<p>${esc(t.paragraph(t.int(6, 9)))}</p>`).join('\n  ');
  return page(
    t.title(),
    `  body { margin: 0; background: #fff; color: #000; font-family: Georgia, 'Times New Roman', serif; }
  main { max-width: 1180px; margin: 0 auto; padding: 40px 0; }
  h1 { font-size: 34px; font-weight: 400; margin: 0 0 24px; }
  p { font-size: 19px; line-height: 1.55; margin: 0 0 14px; text-indent: 2em; text-align: justify; }`,
    `<main>
  <h1>${esc(t.title())}</h1>
  ${paragraphs}
</main>`,
  );
}

function proseSansHtml(): string {
  const t = new TextGen(3601);
  const parts: string[] = [];
  for (let section = 0; section < 5; section++) {
    parts.push(`<h2>${esc(t.title())}</h2>`);
    for (let p = 0; p < 3; p++) parts.push(`<p>${esc(t.paragraph(t.int(4, 7)))}</p>`);
  }
  return page(
    t.title(),
    `  body { margin: 0; background: #fff; color: #222; font-family: Arial, Helvetica, sans-serif; }
  header { max-width: 1000px; margin: 0 auto; padding: 28px 0 8px; font-size: 15px; color: #555; }
  main { max-width: 1000px; margin: 0 auto; }
  h1 { font-size: 38px; margin: 8px 0 16px; }
  h2 { font-size: 24px; margin: 28px 0 8px; }
  p { font-size: 17px; line-height: 1.6; margin: 0 0 14px; }`,
    `<header>${esc(t.words(3))} · ${t.int(3, 12)} min read</header>
<main>
  <h1>${esc(t.title())}</h1>
  ${parts.join('\n  ')}
</main>`,
  );
}

function plainTextHtml(): string {
  const t = new TextGen(3701);
  const lines: string[] = [];
  const wrap = (text: string, indent: string) => {
    let line = indent;
    for (const word of text.split(' ')) {
      if (line.length + word.length + 1 > 72) {
        lines.push(line.trimEnd());
        line = indent;
      }
      line += `${word} `;
    }
    lines.push(line.trimEnd());
  };
  lines.push(
    `Network Working Group${' '.repeat(32)}${t.words(2)}`,
    `Request for Comments: ${t.int(7000, 9999)}${' '.repeat(38)}${t.int(2019, 2024)}`,
    '',
  );
  for (let section = 1; section <= 6; section++) {
    lines.push(`${section}.  ${t.title()}`, '');
    for (let p = 0; p < 3; p++) {
      wrap(t.paragraph(t.int(2, 4)), '   ');
      lines.push('');
    }
    if (section % 2 === 0) {
      for (let item = 1; item <= 4; item++) wrap(`${String.fromCharCode(96 + item)})  ${t.sentence()}`, '      ');
      lines.push('');
    }
  }
  // As Chromium shows a text/plain response: a <pre> that wraps, in the default monospace font.
  return page(
    'plain.txt',
    '  body { margin: 8px; background: #fff; color: #000; }\n  pre { word-wrap: break-word; white-space: pre-wrap; margin: 0; }',
    `<pre>${esc(lines.join('\n'))}</pre>`,
  );
}

function wikiHtml(): string {
  const t = new TextGen(3801);
  const headings = Array.from({ length: 6 }, () => t.title());
  const sections = headings.map(
    (heading, i) => `<h2 id="s${i}">${esc(heading)}</h2>
    ${Array.from({ length: 3 }, () => `<p>${linked(t, t.int(3, 6), 6, true)}</p>`).join('\n    ')}`,
  );
  const infobox = Array.from({ length: 10 }, () => `<tr><th>${esc(t.words(2))}</th><td>${linked(t, 1, 4)}</td></tr>`).join('');
  const nav = Array.from({ length: 18 }, () => `<li><a href="#">${esc(t.words(t.int(1, 3)))}</a></li>`).join('');
  const references = Array.from({ length: 12 }, () => `<li>${linked(t, 1, 3)} Retrieved ${t.int(1, 28)} ${t.int(2010, 2024)}.</li>`).join(
    '',
  );
  return page(
    `${headings[0]} — Encyclopedia`,
    `  body { margin: 0; background: #f8f9fa; color: #202122; font-family: sans-serif; font-size: 14px; }
  a { color: #0645ad; text-decoration: none; } sup { line-height: 1; font-size: 11px; }
  .side { position: absolute; left: 0; top: 0; width: 176px; padding: 110px 0 0 12px; }
  .side ul { list-style: none; margin: 0; padding: 0; } .side li { padding: 3px 0; font-size: 13px; }
  .content { margin-left: 176px; background: #fff; border: 1px solid #a7d7f9; border-right: 0; padding: 16px 24px; min-height: 1400px; }
  h1 { font-family: 'Linux Libertine', Georgia, serif; font-weight: 400; font-size: 29px; margin: 0 0 4px; border-bottom: 1px solid #a2a9b1; }
  .tagline { font-size: 12px; color: #54595d; margin-bottom: 12px; }
  h2 { font-family: 'Linux Libertine', Georgia, serif; font-weight: 400; font-size: 22px; margin: 18px 0 6px; border-bottom: 1px solid #a2a9b1; }
  p { line-height: 1.6; margin: 6px 0 10px; }
  .infobox { float: right; width: 300px; margin: 0 0 12px 16px; border: 1px solid #a2a9b1; background: #f8f9fa; border-spacing: 3px; font-size: 12.5px; line-height: 1.5; }
  .infobox caption { font-size: 16px; font-weight: 700; padding: 4px; } .infobox th { text-align: left; vertical-align: top; padding-right: 6px; }
  .toc { display: inline-block; border: 1px solid #a2a9b1; background: #f8f9fa; padding: 8px 16px; font-size: 13px; }
  .toc ol { margin: 4px 0; padding-left: 20px; }
  .refs { font-size: 12.5px; column-count: 2; }`,
    `<nav class="side"><ul>${nav}</ul></nav>
<div class="content">
  <h1>${esc(headings[0]!)}</h1>
  <div class="tagline">From the free encyclopedia</div>
  <table class="infobox"><caption>${esc(t.words(3))}</caption>${infobox}</table>
  <p>${linked(t, 5, 5, true)}</p>
  <p>${linked(t, 4, 5, true)}</p>
  <div class="toc"><b>Contents</b><ol>${headings.map((h, i) => `<li><a href="#s${i}">${esc(h)}</a></li>`).join('')}</ol></div>
  ${sections.join('\n  ')}
  <h2>References</h2>
  <ol class="refs">${references}</ol>
</div>`,
  );
}

function readmeHtml(): string {
  const t = new TextGen(3901);
  const code = (lines: number) =>
    `<pre><code>${Array.from({ length: lines }, () => `${t.pick(['const', 'await', 'export', 'import', 'return'])} ${t.words(t.int(2, 6)).replace(/ /g, t.pick(['.', '(', ', ', ' = ']))}();`).join('\n')}</code></pre>`;
  const list = (items: number) =>
    `<ul>${Array.from({ length: items }, () => `<li>${linked(t, 1, 7)} Use <code>${t.words(1)}</code>.</li>`).join('')}</ul>`;
  const rows = Array.from(
    { length: 6 },
    () => `<tr><td><code>${t.words(1)}</code></td><td>${t.pick(['string', 'number', 'boolean'])}</td><td>${esc(t.sentence())}</td></tr>`,
  ).join('');
  return page(
    'README.md',
    `  body { margin: 0; background: #fff; color: #1f2328; font-family: -apple-system, 'Segoe UI', 'Noto Sans', Helvetica, Arial, sans-serif; font-size: 16px; line-height: 1.5; }
  article { max-width: 980px; margin: 24px auto; border: 1px solid #d1d9e0; border-radius: 6px; padding: 32px 40px; }
  a { color: #0969da; text-decoration: none; }
  h1, h2 { border-bottom: 1px solid #d1d9e0; padding-bottom: 6px; margin: 24px 0 16px; } h1 { font-size: 32px; margin-top: 0; } h2 { font-size: 24px; }
  code { font-family: ui-monospace, 'DejaVu Sans Mono', monospace; font-size: 85%; background: #eff1f3; padding: 2px 5px; border-radius: 6px; }
  pre { background: #f6f8fa; border-radius: 6px; padding: 16px; font-size: 85%; line-height: 1.45; } pre code { background: none; padding: 0; font-size: 100%; }
  table { border-collapse: collapse; } td, th { border: 1px solid #d1d9e0; padding: 6px 13px; } tr:nth-child(2n) { background: #f6f8fa; }`,
    `<article>
  <h1>${esc(t.words(2))}</h1>
  <p>${linked(t, 3, 8)}</p>
  <h2>Install</h2>
  ${code(2)}
  <h2>Usage</h2>
  <p>${linked(t, 2, 8)}</p>
  ${code(6)}
  ${list(5)}
  <h2>Options</h2>
  <table><tr><th>name</th><th>type</th><th>what it does</th></tr>${rows}</table>
  <h2>Contributing</h2>
  <p>${linked(t, 4, 8)}</p>
</article>`,
  );
}

/** The plain text pages' files, by name in the set's folder. */
export function plainTextPages(): Map<string, Buffer> {
  return new Map([
    ['prose-serif.html', Buffer.from(proseSerifHtml())],
    ['prose-sans.html', Buffer.from(proseSansHtml())],
    ['plain.html', Buffer.from(plainTextHtml())],
    ['wiki.html', Buffer.from(wikiHtml())],
    ['readme.html', Buffer.from(readmeHtml())],
  ]);
}

export const PLAIN_TEXT_FILES: readonly string[] = ['prose-serif.html', 'prose-sans.html', 'plain.html', 'wiki.html', 'readme.html'];

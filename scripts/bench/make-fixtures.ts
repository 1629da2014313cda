/**
 * Generates the benchmark fixture pages in tests/fixtures/bench/ (deterministic: a seeded PRNG, no
 * clock, no network).
 *
 *   tsx scripts/bench/make-fixtures.ts          writes the files that are missing
 *   tsx scripts/bench/make-fixtures.ts --force  rewrites every file
 *
 * realistic.html: a news front page (header, nav, hero, 9 story cards, ~40 text articles, sidebar,
 * footer) with its stylesheet, script, SVG logo and 10 PNG images as separate files, ≈ 300 KB in all.
 * lazy.html: 40 `<img loading="lazy">` images of 1200×280 px with text between them; the images
 * (/img/lazy-N.png, solid colours) are generated in memory by the fixture server, so they are not
 * committed.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PNG } from 'pngjs';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURE_DIR = join(REPO_ROOT, 'tests', 'fixtures', 'bench');

export const LAZY_COUNT = 40;
export const LAZY_WIDTH = 1200;
/**
 * 280 px (not 400) so that the whole page, ≈ 15 100 px, stays under the 16 383 px that capture
 * tools cap full-page output at (Chromium's WebP limit): every contender then renders and encodes
 * the same full page, and every image must be in the output.
 */
export const LAZY_HEIGHT = 280;

/** Paths (relative to FIXTURE_DIR) of everything realistic.html loads, the page itself first. */
export const REALISTIC_RESOURCES: readonly string[] = [
  'realistic.html',
  'assets/site.css',
  'assets/app.js',
  'assets/logo.svg',
  'img/hero.png',
  ...Array.from({ length: 9 }, (_, i) => `img/story-${i + 1}.png`),
];

// ---------------------------------------------------------------------------------------------
// Deterministic randomness and text

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const WORDS = (
  'the council city market report energy climate school river harbour plan budget vote season ' +
  'minister local transport rail station housing project water health hospital study research ' +
  'university students team coach league match final record weather storm coast farmers prices ' +
  'inflation bank rates growth jobs workers union strike festival music film theatre museum art ' +
  'gallery book author history century bridge tunnel road traffic cyclists park garden island ' +
  'mountain village election candidate debate policy reform court judge appeal police community ' +
  'neighbours volunteers charity donation library digital network software startup investors ' +
  'company quarter profit shares export import trade agreement summit leaders ministers officials ' +
  'residents survey data analysis experts warned announced confirmed expected reported said ' +
  'morning evening weekend yesterday today tomorrow during after before while although because ' +
  'new old major minor first last early late public private national regional international'
).split(' ');

export class TextGen {
  private readonly rnd: () => number;
  constructor(seed: number) {
    this.rnd = mulberry32(seed);
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.rnd() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.rnd() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }
  words(n: number): string {
    return Array.from({ length: n }, () => this.pick(WORDS)).join(' ');
  }
  sentence(): string {
    const s = this.words(this.int(8, 18));
    return `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;
  }
  paragraph(sentences: number): string {
    return Array.from({ length: sentences }, () => this.sentence()).join(' ');
  }
  title(): string {
    const s = this.words(this.int(5, 9));
    return s.charAt(0).toUpperCase() + s.slice(1);
  }
}

// ---------------------------------------------------------------------------------------------
// Images

interface Rgb {
  r: number;
  g: number;
  b: number;
}

function hsl(h: number, s: number, l: number): Rgb {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return { r: Math.round(f(0) * 255), g: Math.round(f(8) * 255), b: Math.round(f(4) * 255) };
}

export function encodePng(png: PNG): Buffer {
  return PNG.sync.write(png, { deflateLevel: 9 });
}

/**
 * A photo-like picture: a diagonal gradient, a few soft discs and rectangles ("objects"), and
 * grain on a fraction `grain` of the pixels. More grain, bigger file.
 */
export function drawPicture(width: number, height: number, seed: number, grain: number): PNG {
  const rnd = mulberry32(seed);
  const png = new PNG({ width, height, colorType: 2 });
  // png.data is RGBA (the input format); colorType 2 writes RGB without alpha.
  const data = png.data;
  const hue = rnd() * 360;
  const c1 = hsl(hue, 0.55, 0.35);
  const c2 = hsl((hue + 60) % 360, 0.6, 0.7);
  const shapes = Array.from({ length: 7 }, () => ({
    x: rnd() * width,
    y: rnd() * height,
    r: (0.08 + rnd() * 0.22) * Math.min(width, height),
    disc: rnd() < 0.6,
    colour: hsl((hue + 120 + rnd() * 120) % 360, 0.5, 0.3 + rnd() * 0.5),
  }));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // Banded gradient (flat areas, like an illustration or a compressed photo's sky).
      const t = Math.round(((x / width + y / height) / 2) * 16) / 16;
      let r = c1.r + (c2.r - c1.r) * t;
      let g = c1.g + (c2.g - c1.g) * t;
      let b = c1.b + (c2.b - c1.b) * t;
      for (const s of shapes) {
        const inside = s.disc ? (x - s.x) ** 2 + (y - s.y) ** 2 < s.r * s.r : Math.abs(x - s.x) < s.r && Math.abs(y - s.y) < s.r * 0.6;
        if (inside) {
          r = (r + s.colour.r) / 2;
          g = (g + s.colour.g) / 2;
          b = (b + s.colour.b) / 2;
        }
      }
      if (rnd() < grain) {
        const n = (rnd() - 0.5) * 40;
        r += n;
        g += n;
        b += n;
      }
      const i = (y * width + x) * 4;
      data[i] = Math.max(0, Math.min(255, Math.round(r)));
      data[i + 1] = Math.max(0, Math.min(255, Math.round(g)));
      data[i + 2] = Math.max(0, Math.min(255, Math.round(b)));
      data[i + 3] = 255;
    }
  }
  return png;
}

/** Binary search on the grain so that the encoded PNG is close to `targetBytes`. */
export function pictureNear(width: number, height: number, seed: number, targetBytes: number): Buffer {
  let lo = 0;
  let hi = 0.5;
  let best = encodePng(drawPicture(width, height, seed, 0));
  for (let i = 0; i < 10; i++) {
    const mid = (lo + hi) / 2;
    const bytes = encodePng(drawPicture(width, height, seed, mid));
    if (Math.abs(bytes.length - targetBytes) < Math.abs(best.length - targetBytes)) best = bytes;
    if (bytes.length < targetBytes) lo = mid;
    else hi = mid;
  }
  return best;
}

/** The fill colour of lazy image n (1-based): distinct, saturated, never near white. */
export function lazyColour(n: number): Rgb {
  return hsl(((n - 1) * 360) / LAZY_COUNT, 0.75, 0.45);
}

const lazyCache = new Map<number, Buffer>();

/** /img/lazy-N.png: a solid 1200×280 PNG, generated once per process. */
export function lazyImagePng(n: number): Buffer {
  const cached = lazyCache.get(n);
  if (cached) return cached;
  const png = new PNG({ width: LAZY_WIDTH, height: LAZY_HEIGHT, colorType: 2 });
  const { r, g, b } = lazyColour(n);
  for (let i = 0; i < png.data.length; i += 4) {
    png.data[i] = r;
    png.data[i + 1] = g;
    png.data[i + 2] = b;
    png.data[i + 3] = 255;
  }
  const bytes = encodePng(png);
  lazyCache.set(n, bytes);
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Text files

const SECTIONS = ['World', 'Politics', 'Business', 'Tech', 'Science', 'Climate', 'Sport', 'Culture', 'Travel', 'Opinion'];

function logoSvg(): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="260" height="48" viewBox="0 0 260 48">
  <defs>
    <linearGradient id="g" x1="0" y1="0" x2="1" y2="1">
      <stop offset="0" stop-color="#c81e3a"/>
      <stop offset="1" stop-color="#7a0f22"/>
    </linearGradient>
  </defs>
  <rect x="2" y="4" width="40" height="40" rx="8" fill="url(#g)"/>
  <path d="M12 34 L22 14 L32 34 Z" fill="#fff" opacity="0.9"/>
  <circle cx="22" cy="28" r="4" fill="#c81e3a"/>
  <text x="52" y="33" font-family="Georgia, 'Times New Roman', serif" font-size="26" font-weight="700" fill="#111">The Daily Bench</text>
</svg>
`;
}

function siteCss(targetBytes: number): string {
  const base = `/* The Daily Bench — site stylesheet (generated fixture) */
:root {
  --ink: #16181d; --muted: #5b616e; --line: #e3e5ea; --paper: #ffffff; --accent: #c81e3a;
  --accent-dark: #7a0f22; --soft: #f5f6f8; --radius: 10px; --gap: 24px; --max: 1280px;
  --serif: Georgia, 'Times New Roman', serif; --sans: 'Helvetica Neue', Arial, 'Liberation Sans', sans-serif;
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font-family: var(--sans); color: var(--ink); background: var(--paper); line-height: 1.55; font-size: 16px; }
a { color: inherit; text-decoration: none; }
a:hover { text-decoration: underline; }
img { display: block; max-width: 100%; height: auto; }
.container { max-width: var(--max); margin: 0 auto; padding: 0 24px; }
.topbar { background: var(--ink); color: #d8dbe2; font-size: 13px; }
.topbar .container { display: flex; justify-content: space-between; align-items: center; height: 34px; }
.topbar a { color: #fff; margin-left: 16px; }
.masthead { border-bottom: 1px solid var(--line); }
.masthead .container { display: flex; align-items: center; justify-content: space-between; height: 88px; }
.masthead .date { color: var(--muted); font-size: 14px; }
.masthead .subscribe { background: var(--accent); color: #fff; padding: 10px 18px; border-radius: 999px; font-weight: 700; }
.nav { position: sticky; top: 0; z-index: 10; background: #fff; border-bottom: 3px solid var(--ink); }
.nav ul { list-style: none; margin: 0; padding: 0; display: flex; gap: 4px; overflow-x: auto; }
.nav li a { display: block; padding: 14px 14px; font-weight: 700; font-size: 15px; text-transform: uppercase; letter-spacing: .04em; }
.nav li a.active { color: var(--accent); box-shadow: inset 0 -3px 0 var(--accent); }
.nav .menu-toggle { display: none; }
.ticker { background: var(--soft); border-bottom: 1px solid var(--line); font-size: 14px; }
.ticker .container { display: flex; gap: 12px; align-items: center; height: 42px; white-space: nowrap; overflow: hidden; }
.ticker strong { color: var(--accent); text-transform: uppercase; }
.hero { padding: 32px 0; }
.hero .container { display: grid; grid-template-columns: 2fr 1fr; gap: var(--gap); }
.hero figure { margin: 0; position: relative; border-radius: var(--radius); overflow: hidden; min-height: 520px; background: var(--soft); }
.hero figure img { width: 100%; height: 100%; object-fit: cover; position: absolute; inset: 0; }
.hero figcaption { position: absolute; inset: auto 0 0 0; padding: 28px; background: linear-gradient(transparent, rgba(0,0,0,.75)); color: #fff; }
.hero h1 { font-family: var(--serif); font-size: 44px; line-height: 1.1; margin: 0 0 8px; }
.hero .side article { padding: 16px 0; border-bottom: 1px solid var(--line); }
.hero .side h2 { font-family: var(--serif); font-size: 22px; margin: 4px 0; }
.kicker { color: var(--accent); font-size: 12px; font-weight: 800; text-transform: uppercase; letter-spacing: .08em; }
.meta { color: var(--muted); font-size: 13px; }
.section-title { font-family: var(--serif); font-size: 28px; border-top: 3px solid var(--ink); padding-top: 10px; margin: 40px 0 20px; }
.cards { display: grid; grid-template-columns: repeat(3, 1fr); gap: var(--gap); }
.card { border: 1px solid var(--line); border-radius: var(--radius); overflow: hidden; background: #fff; transition: box-shadow .2s; }
.card:hover { box-shadow: 0 8px 24px rgba(0,0,0,.08); }
.card .body { padding: 16px 18px 20px; }
.card h3 { font-family: var(--serif); font-size: 21px; line-height: 1.25; margin: 6px 0 8px; }
.card p { color: #333844; margin: 0; font-size: 15px; }
.layout { display: grid; grid-template-columns: minmax(0, 1fr) 340px; gap: 40px; }
.stream article { padding: 22px 0; border-bottom: 1px solid var(--line); }
.stream h3 { font-family: var(--serif); font-size: 24px; margin: 6px 0 10px; }
.stream p { margin: 0 0 10px; color: #2b2f38; }
.sidebar .box { background: var(--soft); border-radius: var(--radius); padding: 20px; margin-bottom: 24px; }
.sidebar h4 { margin: 0 0 12px; font-size: 14px; text-transform: uppercase; letter-spacing: .08em; }
.most-read { counter-reset: rank; list-style: none; margin: 0; padding: 0; }
.most-read li { counter-increment: rank; display: grid; grid-template-columns: 36px 1fr; padding: 10px 0; border-bottom: 1px solid var(--line); }
.most-read li::before { content: counter(rank); font-family: var(--serif); font-size: 26px; color: var(--accent); }
.newsletter input { width: 100%; padding: 10px 12px; border: 1px solid var(--line); border-radius: 6px; font-size: 15px; }
.newsletter button { margin-top: 10px; width: 100%; padding: 10px; border: 0; border-radius: 6px; background: var(--ink); color: #fff; font-weight: 700; }
.tabs { display: flex; gap: 8px; margin-bottom: 12px; }
.tabs button { border: 1px solid var(--line); background: #fff; padding: 6px 12px; border-radius: 999px; cursor: pointer; }
.tabs button[aria-selected="true"] { background: var(--ink); color: #fff; }
.footer { margin-top: 56px; background: var(--ink); color: #c9ccd4; padding: 40px 0; font-size: 14px; }
.footer .cols { display: grid; grid-template-columns: repeat(5, 1fr); gap: var(--gap); }
.footer h5 { color: #fff; font-size: 13px; text-transform: uppercase; margin: 0 0 10px; }
.footer ul { list-style: none; margin: 0; padding: 0; }
.footer li { margin: 6px 0; }
.footer .legal { border-top: 1px solid #333; margin-top: 28px; padding-top: 16px; color: #8d929c; }
@media (max-width: 1024px) {
  .hero .container, .layout { grid-template-columns: 1fr; }
  .cards { grid-template-columns: repeat(2, 1fr); }
  .footer .cols { grid-template-columns: repeat(3, 1fr); }
}
@media (max-width: 640px) {
  .cards { grid-template-columns: 1fr; }
  .nav .menu-toggle { display: block; }
  .nav ul { display: none; }
  .nav.open ul { display: block; }
  .hero h1 { font-size: 32px; }
}
`;
  // Section themes and utilities, the way a design system's compiled CSS looks, up to the target size.
  const parts: string[] = [base];
  let size = base.length;
  const add = (rule: string) => {
    parts.push(rule);
    size += rule.length;
  };
  SECTIONS.forEach((name, i) => {
    const c = hsl((i * 36) % 360, 0.6, 0.4);
    const colour = `rgb(${c.r}, ${c.g}, ${c.b})`;
    const slug = name.toLowerCase();
    add(
      `.theme-${slug} .kicker, .theme-${slug} .section-title { color: ${colour}; border-color: ${colour}; }\n` +
        `.theme-${slug} .card { border-top: 4px solid ${colour}; }\n` +
        `.theme-${slug} .card:hover h3, .theme-${slug} .stream h3:hover { color: ${colour}; }\n` +
        `.badge-${slug} { display: inline-block; padding: 2px 8px; border-radius: 4px; background: ${colour}; color: #fff; font-size: 11px; font-weight: 700; }\n`,
    );
  });
  const spacing = [0, 2, 4, 6, 8, 10, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64];
  const props: [string, string][] = [
    ['m', 'margin'],
    ['mt', 'margin-top'],
    ['mb', 'margin-bottom'],
    ['ml', 'margin-left'],
    ['mr', 'margin-right'],
    ['p', 'padding'],
    ['pt', 'padding-top'],
    ['pb', 'padding-bottom'],
    ['pl', 'padding-left'],
    ['pr', 'padding-right'],
    ['gap', 'gap'],
  ];
  const breakpoints: [string, number][] = [
    ['', 0],
    ['md\\:', 768],
    ['lg\\:', 1024],
  ];
  outer: for (const [prefix, minWidth] of breakpoints) {
    const rules: string[] = [];
    for (const [short, prop] of props) {
      for (const [i, px] of spacing.entries()) rules.push(`.${prefix}${short}-${i} { ${prop}: ${px}px; }`);
    }
    for (let i = 1; i <= 12; i++) rules.push(`.${prefix}col-span-${i} { grid-column: span ${i} / span ${i}; }`);
    for (const size of [12, 13, 14, 15, 16, 18, 20, 24, 28, 32, 40]) rules.push(`.${prefix}text-${size} { font-size: ${size}px; }`);
    const block = minWidth === 0 ? `${rules.join('\n')}\n` : `@media (min-width: ${minWidth}px) {\n  ${rules.join('\n  ')}\n}\n`;
    if (size + block.length > targetBytes) {
      // Take the rules one by one until the target.
      for (const rule of rules) {
        if (size + rule.length + 1 > targetBytes) break outer;
        add(`${rule}\n`);
      }
      break;
    }
    add(block);
  }
  return parts.join('');
}

function appJs(): string {
  return `// The Daily Bench — front-page behaviour (generated fixture; deterministic, no timers, no network)
(function () {
  'use strict';
  var mostRead = ${JSON.stringify(Array.from({ length: 8 }, (_, i) => new TextGen(900 + i).title()))};
  var list = document.querySelector('[data-most-read]');
  if (list) {
    mostRead.forEach(function (title, i) {
      var li = document.createElement('li');
      var a = document.createElement('a');
      a.href = '#most-read-' + (i + 1);
      a.textContent = title;
      li.appendChild(a);
      list.appendChild(li);
    });
  }
  var toggle = document.querySelector('.menu-toggle');
  var nav = document.querySelector('.nav');
  if (toggle && nav) {
    toggle.addEventListener('click', function () {
      nav.classList.toggle('open');
      toggle.setAttribute('aria-expanded', nav.classList.contains('open') ? 'true' : 'false');
    });
  }
  var tabs = document.querySelectorAll('.tabs button');
  tabs.forEach(function (tab) {
    tab.addEventListener('click', function () {
      tabs.forEach(function (t) { t.setAttribute('aria-selected', t === tab ? 'true' : 'false'); });
      document.querySelectorAll('[data-panel]').forEach(function (panel) {
        panel.hidden = panel.getAttribute('data-panel') !== tab.getAttribute('data-tab');
      });
    });
  });
  var form = document.querySelector('.newsletter');
  if (form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var input = form.querySelector('input');
      var ok = input && /^[^@\\s]+@[^@\\s]+$/.test(input.value);
      form.querySelector('button').textContent = ok ? 'Subscribed' : 'Enter a valid e-mail';
    });
  }
  document.querySelectorAll('time[data-relative]').forEach(function (el) {
    var minutes = Number(el.getAttribute('data-relative'));
    el.textContent = minutes < 60 ? minutes + ' min ago' : Math.round(minutes / 60) + ' h ago';
  });
  document.documentElement.classList.add('js-ready');
})();
`;
}

function realisticHtml(): string {
  const t = new TextGen(42);
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const nav = SECTIONS.map((s, i) => `<li><a href="#${s.toLowerCase()}"${i === 0 ? ' class="active"' : ''}>${s}</a></li>`).join(
    '\n        ',
  );
  const ticker = Array.from({ length: 6 }, () => `<span>${esc(t.title())}</span>`).join(' &middot; ');
  const side = Array.from(
    { length: 4 },
    (_, i) => `<article>
          <span class="kicker">${SECTIONS[(i + 1) % SECTIONS.length]}</span>
          <h2><a href="#side-${i}">${esc(t.title())}</a></h2>
          <p class="meta">By ${esc(t.words(2))} &middot; <time data-relative="${(i + 1) * 17}"></time></p>
        </article>`,
  ).join('\n        ');
  const cards = Array.from({ length: 9 }, (_, i) => {
    const section = SECTIONS[(i + 2) % SECTIONS.length] ?? 'World';
    return `<article class="card theme-${section.toLowerCase()}">
          <img src="/img/story-${i + 1}.png" width="480" height="270" alt="${esc(t.words(4))}">
          <div class="body">
            <span class="kicker">${section}</span> <span class="badge-${section.toLowerCase()}">Live</span>
            <h3><a href="#story-${i + 1}">${esc(t.title())}</a></h3>
            <p>${esc(t.paragraph(2))}</p>
            <p class="meta mt-3"><time data-relative="${(i + 2) * 23}"></time></p>
          </div>
        </article>`;
  }).join('\n        ');
  const stream = Array.from({ length: 38 }, (_, i) => {
    const section = SECTIONS[i % SECTIONS.length] ?? 'World';
    const paras = Array.from({ length: t.int(2, 3) }, () => `<p>${esc(t.paragraph(t.int(3, 5)))}</p>`).join('\n            ');
    return `<article class="theme-${section.toLowerCase()}" id="article-${i + 1}">
            <span class="kicker">${section}</span>
            <h3><a href="#article-${i + 1}">${esc(t.title())}</a></h3>
            <p class="meta">By ${esc(t.words(2))} &middot; <time data-relative="${(i + 3) * 11}"></time> &middot; ${t.int(2, 9)} min read</p>
            ${paras}
          </article>`;
  }).join('\n          ');
  const footerCols = SECTIONS.slice(0, 5)
    .map(
      (s) => `<div><h5>${s}</h5><ul>${Array.from({ length: 6 }, () => `<li><a href="#">${esc(t.words(2))}</a></li>`).join('')}</ul></div>`,
    )
    .join('\n        ');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>The Daily Bench — News, analysis and opinion</title>
  <meta name="description" content="${esc(t.sentence())}">
  <link rel="stylesheet" href="/assets/site.css">
  <script src="/assets/app.js" defer></script>
</head>
<body>
  <div class="topbar"><div class="container"><span>${esc(t.sentence())}</span><span><a href="#">Sign in</a><a href="#">Help</a></span></div></div>
  <header class="masthead">
    <div class="container">
      <span class="date">Tuesday 14 May</span>
      <a href="/" aria-label="Home"><img src="/assets/logo.svg" width="260" height="48" alt="The Daily Bench"></a>
      <a class="subscribe" href="#subscribe">Subscribe</a>
    </div>
  </header>
  <nav class="nav" aria-label="Sections">
    <div class="container">
      <button class="menu-toggle" aria-expanded="false">Menu</button>
      <ul>
        ${nav}
      </ul>
    </div>
  </nav>
  <div class="ticker"><div class="container"><strong>Breaking</strong> ${ticker}</div></div>
  <main>
    <section class="hero">
      <div class="container">
        <figure>
          <img src="/img/hero.png" width="1200" height="520" alt="${esc(t.words(5))}">
          <figcaption>
            <span class="kicker">World</span>
            <h1>${esc(t.title())}</h1>
            <p>${esc(t.paragraph(2))}</p>
          </figcaption>
        </figure>
        <div class="side">
        ${side}
        </div>
      </div>
    </section>
    <div class="container">
      <h2 class="section-title">Top stories</h2>
      <div class="cards">
        ${cards}
      </div>
      <h2 class="section-title">Latest</h2>
      <div class="layout">
        <div class="stream">
          ${stream}
        </div>
        <aside class="sidebar">
          <div class="box">
            <h4>Most read</h4>
            <div class="tabs"><button data-tab="today" aria-selected="true">Today</button><button data-tab="week" aria-selected="false">This week</button></div>
            <ol class="most-read" data-most-read data-panel="today"></ol>
            <ol class="most-read" data-panel="week" hidden>${Array.from({ length: 5 }, () => `<li><a href="#">${esc(t.title())}</a></li>`).join('')}</ol>
          </div>
          <form class="box newsletter" id="subscribe">
            <h4>Morning briefing</h4>
            <p>${esc(t.paragraph(2))}</p>
            <input type="email" placeholder="you@example.com" aria-label="E-mail">
            <button type="submit">Sign up</button>
          </form>
          <div class="box"><h4>Opinion</h4>${Array.from({ length: 4 }, () => `<p><a href="#">${esc(t.title())}</a></p>`).join('')}</div>
        </aside>
      </div>
    </div>
  </main>
  <footer class="footer">
    <div class="container">
      <div class="cols">
        ${footerCols}
      </div>
      <p class="legal">${esc(t.paragraph(2))}</p>
    </div>
  </footer>
</body>
</html>
`;
}

function lazyHtml(): string {
  const t = new TextGen(7);
  const blocks = Array.from(
    { length: LAZY_COUNT },
    (_, i) => `  <section class="block">
    <h2>Section ${i + 1}: ${t.title()}</h2>
    <p>${t.sentence()}</p>
    <img loading="lazy" src="/img/lazy-${i + 1}.png" width="${LAZY_WIDTH}" height="${LAZY_HEIGHT}" alt="Image ${i + 1}" data-n="${i + 1}">
  </section>`,
  ).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Lazy images fixture</title>
  <style>
    body { margin: 0; font-family: Arial, 'Liberation Sans', sans-serif; color: #222; background: #fff; }
    header { padding: 24px 40px; border-bottom: 1px solid #ddd; }
    .block { width: ${LAZY_WIDTH}px; margin: 0 auto; padding: 12px 0; }
    .block h2 { margin: 0 0 8px; font-size: 22px; }
    .block p { margin: 0 0 12px; line-height: 1.5; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
    .block img { display: block; width: ${LAZY_WIDTH}px; height: ${LAZY_HEIGHT}px; background: #eee; }
  </style>
</head>
<body>
  <header><h1>${LAZY_COUNT} lazy images</h1><p>${t.paragraph(2)}</p></header>
${blocks}
</body>
</html>
`;
}

// ---------------------------------------------------------------------------------------------

export interface FixtureFile {
  path: string;
  bytes: number;
}

function generate(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  files.set('realistic.html', Buffer.from(realisticHtml()));
  files.set('assets/site.css', Buffer.from(siteCss(30 * 1024)));
  files.set('assets/app.js', Buffer.from(appJs()));
  files.set('assets/logo.svg', Buffer.from(logoSvg()));
  files.set('img/hero.png', pictureNear(1200, 520, 1001, 40 * 1024));
  for (let i = 1; i <= 9; i++) files.set(`img/story-${i}.png`, pictureNear(480, 270, 2000 + i, 17.5 * 1024));
  files.set('lazy.html', Buffer.from(lazyHtml()));
  return files;
}

/** The file names buildFixtures writes (for checking that they exist). */
export const FIXTURE_FILES: readonly string[] = [...REALISTIC_RESOURCES, 'lazy.html'];

/**
 * Writes the fixtures. Without `force`, does nothing when every file exists (the committed files
 * are used as they are; a different zlib could otherwise produce different PNG bytes).
 */
export async function buildFixtures(force = false): Promise<{ written: boolean; files: FixtureFile[] }> {
  const allExist = FIXTURE_FILES.every((f) => existsSync(join(FIXTURE_DIR, f)));
  let written = false;
  if (force || !allExist) {
    for (const [path, bytes] of generate()) {
      const target = join(FIXTURE_DIR, path);
      await mkdir(dirname(target), { recursive: true });
      const current = existsSync(target) ? await readFile(target) : undefined;
      if (!current || !current.equals(bytes)) await writeFile(target, bytes);
    }
    written = true;
  }
  const files: FixtureFile[] = [];
  for (const f of FIXTURE_FILES) files.push({ path: f, bytes: (await stat(join(FIXTURE_DIR, f))).size });
  return { written, files };
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const force = process.argv.includes('--force');
  const { written, files } = await buildFixtures(force);
  const realistic = files.filter((f) => REALISTIC_RESOURCES.includes(f.path)).reduce((s, f) => s + f.bytes, 0);
  const total = files.reduce((s, f) => s + f.bytes, 0);
  for (const f of files) console.log(`${String(f.bytes).padStart(8)}  ${relative(REPO_ROOT, join(FIXTURE_DIR, f.path))}`);
  console.log(
    `${written ? 'written' : 'already present (use --force to rewrite)'}; realistic page transfer ${(realistic / 1024).toFixed(1)} KiB; committed total ${(total / 1024).toFixed(1)} KiB`,
  );
}

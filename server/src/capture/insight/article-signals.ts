import type { Page } from 'puppeteer-core';

/**
 * What a page says about its article, as raw text: the rules that choose the title, authors and
 * dates from it run in the service (article-metadata.ts), where they can be tested without a
 * browser. Everything here is bounded so that a huge page costs the same as a small one.
 */
export interface ArticleSignals {
  /** document.title */
  documentTitle: string;
  /** location.hostname */
  host: string;
  /** The lang attribute of `<html>` */
  language: string | null;
  /** `<meta>` name, property or itemprop (lower case) and content, in page order. */
  metas: Array<[string, string]>;
  /** The text of every `<script type="application/ld+json">`, each cut to a bound. */
  jsonLd: string[];
  /** Microdata: itemprop (author, creator, datePublished, dateCreated, dateModified, headline), its value, in the headline's block. */
  itemprops: Array<{ prop: string; value: string; near: boolean }>;
  /** The rendered text of the headline's block, where a byline stands, cut to a bound. */
  headerText: string;
  /**
   * Elements whose class, id, rel or link names an author or byline: that hint, their text (one line
   * per rendered line) and whether they are in the headline's block.
   */
  bylines: Array<{ hint: string; text: string; near: boolean }>;
  /** Short texts that start with "By " in the article's header area. */
  byTexts: string[];
  /** `<time>` and date-like elements: the tag and class/id/itemprop hint, the datetime attribute, the text, in the headline's block. */
  times: Array<{ hint: string; datetime: string; text: string; near: boolean }>;
  /** The page's `<h1>`s in page order: text, whether in an article (or marked as a headline), whether rendered. */
  headings: Array<{ text: string; inArticle: boolean; visible: boolean }>;
}

export const SIGNAL_LIMITS = { metas: 400, jsonLdScripts: 20, jsonLdChars: 200_000, elements: 40, text: 300, headerText: 3000 } as const;

/** Runs in the page. Self-contained: puppeteer sends its source, not its closure. */
export function collectArticleSignals(limits: typeof SIGNAL_LIMITS): ArticleSignals {
  const collapse = (text: string | null | undefined) => (text ?? '').replace(/\s+/g, ' ').trim();
  const clean = (text: string | null | undefined) => collapse(text).slice(0, limits.text);
  const hintOf = (element: Element) =>
    [element.getAttribute('class'), element.id, element.getAttribute('rel'), element.getAttribute('itemprop')]
      .filter(Boolean)
      .join(' ')
      .toLowerCase()
      .slice(0, 200);
  // Comments and related-article lists name other people and other dates.
  const elsewhere = (element: Element) =>
    Boolean(element.closest('[id*="comment" i], [class*="comment" i], aside, footer, nav, [class*="related" i], [class*="recommend" i]'));

  const metas: ArticleSignals['metas'] = [];
  // `value` for `content`: old CMSs write it, and so do saved pages that went through Mercury's cleaner.
  for (const element of document.querySelectorAll('meta[content], meta[value]')) {
    if (metas.length >= limits.metas) break;
    // An itemprop inside an item (a Person's name) is the item's, read as microdata below.
    const scope = element.parentElement?.closest('[itemscope]');
    const itemprop = scope && scope !== document.documentElement && scope !== document.body ? '' : element.getAttribute('itemprop');
    const key = (element.getAttribute('property') || element.getAttribute('name') || itemprop || '').trim();
    const content = clean(element.getAttribute('content') ?? element.getAttribute('value'));
    if (key && content) metas.push([key.toLowerCase(), content]);
  }
  const jsonLd = [...document.querySelectorAll('script[type="application/ld+json" i]')]
    .slice(0, limits.jsonLdScripts)
    .map((script) => (script.textContent ?? '').slice(0, limits.jsonLdChars));

  // The headline's block: bylines and dates inside it belong to the article, not to a list beside it.
  const ARTICLE =
    'article, main, [role="main"], [itemprop~="headline" i], [itemtype*="Article"], [class*="headline" i], [class*="article" i]';
  const h1s = [...document.querySelectorAll('h1')].slice(0, limits.elements);
  // Not a logo: an h1 in the article, else the first that reads like a headline.
  const heading = h1s.find((h) => h.closest(ARTICLE)) ?? h1s.find((h) => clean(h.textContent).split(' ').length >= 3) ?? h1s[0];
  const block =
    heading?.closest(
      'header, article, main, [role="main"], [class*="article" i], [class*="post" i], [class*="story" i], [class*="entry" i]',
    ) ??
    heading?.parentElement?.parentElement ??
    null;
  const near = (element: Element) => Boolean(block?.contains(element));
  // Line breaks kept: a byline box often holds the name, then a role, a date or a "Follow" button.
  const rendered = (element: Element, max: number) =>
    ((element as HTMLElement).innerText ?? element.textContent ?? '')
      .slice(0, max * 20)
      .split('\n')
      .map(clean)
      .filter(Boolean)
      .join('\n')
      .slice(0, max);
  // innerText applies text-transform: a line in a single case is taken back as the markup writes it.
  const asWritten = (text: string, source: string) =>
    text
      .split('\n')
      .map((line) => {
        if (!/\p{Lu}|\p{Ll}/u.test(line) || (line.toUpperCase() !== line && line.toLowerCase() !== line)) return line;
        const escaped = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s*');
        return new RegExp(escaped, 'iu').exec(source)?.[0] ?? line;
      })
      .join('\n');
  const lines = (element: Element) => asWritten(rendered(element, limits.text), collapse(element.textContent));

  // A microdata value: meta content, time datetime, a nested item's name, else the text.
  const itemValue = (element: Element): string => {
    if (element.hasAttribute('content')) return clean(element.getAttribute('content'));
    if (element.tagName === 'META') return clean(element.getAttribute('value'));
    if (element.hasAttribute('datetime')) return clean(element.getAttribute('datetime'));
    if (element.hasAttribute('itemscope')) {
      const name = element.querySelector('[itemprop~="name" i]');
      if (name) return itemValue(name);
    }
    // The markup's text: innerText would bring CSS text-transform with it.
    return clean(element.textContent);
  };
  const itemprops: ArticleSignals['itemprops'] = [];
  const props = ['author', 'creator', 'datePublished', 'dateCreated', 'dateModified', 'headline'];
  for (const element of document.querySelectorAll(props.map((p) => `[itemprop~="${p}" i]`).join(','))) {
    if (itemprops.length >= limits.elements) break;
    if (elsewhere(element)) continue;
    const prop = props.find((p) => element.getAttribute('itemprop')!.toLowerCase().split(/\s+/).includes(p.toLowerCase()))!;
    const value = itemValue(element);
    if (value) itemprops.push({ prop, value, near: near(element) });
  }

  const bylines: ArticleSignals['bylines'] = [];
  const bylineSelector =
    '[class*="byline" i], [id*="byline" i], [class*="author" i], [id*="author" i], [rel~="author" i], [class*="byl" i], [class*="writer" i], [class*="contributor" i], [data-testid*="author" i], a[href*="/author/" i], a[href*="/authors/" i], a[href*="/by/" i], a[href*="/staff/" i]';
  for (const element of document.querySelectorAll(bylineSelector)) {
    if (bylines.length >= limits.elements) break;
    if (element.closest('head, script, style, template') || elsewhere(element)) continue;
    const text = lines(element);
    const href = element.getAttribute('href')?.toLowerCase() ?? '';
    const hint = `${element.tagName.toLowerCase()} ${hintOf(element)} ${/\/(author|authors|by|staff)\//.test(href) ? 'author-link' : ''}`;
    if (text) bylines.push({ hint: hint.trim(), text, near: near(element) });
  }

  // "By Jane Doe" written as plain text near the headline.
  const byTexts: string[] = [];
  const area = block ?? document.body;
  if (area) {
    const walker = document.createTreeWalker(area, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node && byTexts.length < 5; node = walker.nextNode()) {
      if (!/^\s*by\s/i.test(node.nodeValue ?? '')) continue;
      const text = clean(node.parentElement?.textContent);
      if (text.length < 120 && !elsewhere(node.parentElement!)) byTexts.push(text);
    }
  }

  const times: ArticleSignals['times'] = [];
  const timeSelector =
    'time, [class*="date" i], [class*="time" i], [class*="publish" i], [id*="date" i], [itemprop~="datePublished" i], [itemprop~="dateModified" i]';
  for (const element of document.querySelectorAll(timeSelector)) {
    if (times.length >= limits.elements) break;
    // A person's or an event's card (hCard, an infobox) and cited sources have dates of their own.
    if (element.closest('head, script, style, template, .vcard, [class*="infobox" i], [class*="reference" i], cite') || elsewhere(element))
      continue;
    const datetime = clean(element.getAttribute('datetime') ?? (element.tagName === 'META' ? element.getAttribute('content') : ''));
    const text = clean(element.textContent);
    if ((datetime || text) && text.length < 120)
      times.push({ hint: `${element.tagName.toLowerCase()} ${hintOf(element)}`, datetime, text, near: near(element) });
  }

  const headings = h1s
    .map((h) => ({ text: clean(h.textContent), inArticle: Boolean(h.closest(ARTICLE)), visible: h.getClientRects().length > 0 }))
    .filter((h) => h.text)
    .slice(0, 10);

  // From just before the headline: what a reader sees around it, not the menus above it.
  const container = heading?.closest('article, main, [role="main"]') ?? block;
  const containerText = container ? rendered(container, limits.headerText * 20) : '';
  const at = heading ? Math.max(0, containerText.indexOf(clean(heading.textContent)) - 300) : 0;
  const headerText = container ? asWritten(containerText.slice(at, at + limits.headerText), collapse(container.textContent)) : '';
  const language = document.documentElement.getAttribute('lang')?.trim() || null;
  return {
    documentTitle: document.title,
    host: location.hostname,
    language,
    metas,
    jsonLd,
    itemprops,
    headerText,
    bylines,
    byTexts,
    times,
    headings,
  };
}

const text = (value: unknown, max: number) => (typeof value === 'string' ? value.slice(0, max) : '');
const list = <T>(value: unknown, max: number, each: (item: Record<string, unknown>) => T): T[] =>
  Array.isArray(value)
    ? value.slice(0, max).map((item) => each(typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : {}))
    : [];

/**
 * The page's answer cut to SIGNAL_LIMITS again, here: the collector's own bounds ran on the page's
 * String and Array prototypes, which the page can replace, and the rules that read these texts
 * (article-metadata.ts) must never meet a text longer than the bounds they were written for.
 */
export function boundSignals(raw: unknown): ArticleSignals {
  const signals = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const { metas, jsonLdScripts, jsonLdChars, elements, text: line, headerText } = SIGNAL_LIMITS;
  const lines = line * 10;
  return {
    documentTitle: text(signals.documentTitle, line * 4),
    host: text(signals.host, 255),
    language: typeof signals.language === 'string' ? signals.language.slice(0, 64) : null,
    metas: (Array.isArray(signals.metas) ? signals.metas.slice(0, metas) : []).map((pair): [string, string] =>
      Array.isArray(pair) ? [text(pair[0], 200), text(pair[1], line)] : ['', ''],
    ),
    jsonLd: (Array.isArray(signals.jsonLd) ? signals.jsonLd.slice(0, jsonLdScripts) : []).map((script) => text(script, jsonLdChars)),
    itemprops: list(signals.itemprops, elements, (item) => ({
      prop: text(item.prop, 200),
      value: text(item.value, line),
      near: item.near === true,
    })),
    headerText: text(signals.headerText, headerText),
    bylines: list(signals.bylines, elements, (item) => ({
      hint: text(item.hint, 200),
      text: text(item.text, lines),
      near: item.near === true,
    })),
    byTexts: (Array.isArray(signals.byTexts) ? signals.byTexts.slice(0, elements) : []).map((by) => text(by, line)),
    times: list(signals.times, elements, (item) => ({
      hint: text(item.hint, 200),
      datetime: text(item.datetime, line),
      text: text(item.text, line),
      near: item.near === true,
    })),
    headings: list(signals.headings, 10, (item) => ({
      text: text(item.text, line),
      inArticle: item.inArticle === true,
      visible: item.visible === true,
    })),
  };
}

/** The signals of the page as it is now; a page whose DOM APIs are broken gives none. */
export async function readArticleSignals(page: Page): Promise<ArticleSignals | null> {
  return page.evaluate(collectArticleSignals, SIGNAL_LIMITS).then(boundSignals, () => null);
}

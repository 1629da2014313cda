import { Readability } from '@mozilla/readability';
import { DefuddleClass } from 'defuddle/node';
import { parseHTML } from 'linkedom';
import { findMainElement, isChrome, textStats, type TextStats } from './content-judgement.js';

/**
 * The extractors format=markdown chooses between (docs/page-insight.md, "How the article is
 * chosen"): Mozilla's Readability first, Defuddle second, the page's main landmark last. Each
 * reads its own parse of the serialized DOM (both libraries change the document they read) and
 * returns the article as HTML with its word counts. Everything runs in Node on linkedom: no
 * network (Defuddle's fetching extractors are never called: parse() is its synchronous path).
 */

export type ExtractorName = 'readability' | 'defuddle' | 'landmark' | 'body';

export interface Extraction {
  extractor: ExtractorName;
  /** The article as HTML, for Turndown. */
  html: string;
  /** The article's title as the extractor read it ('' when none). */
  title: string;
  stats: TextStats;
}

/** Readability gives up (and returns null) on documents with more elements than this. */
export const MAX_ELEMENTS = 100_000;
/**
 * Defuddle is not tried on documents with more elements than this: it took 3–10 s on saved pages
 * of 8 000–13 000 elements where Readability took 1–4 s (the median page has about 700).
 */
export const DEFUDDLE_MAX_ELEMENTS = 5_000;

const statsOfHtml = (html: string) => textStats(parseHTML(`<!doctype html><html><body>${html}</body></html>`).document.body);

const documentOf = (html: string) => parseHTML(html).document as unknown as Document;

export function readabilityExtraction(html: string): Extraction | null {
  try {
    const article = new Readability(documentOf(html), { maxElemsToParse: MAX_ELEMENTS, keepClasses: false }).parse();
    if (!article?.content || !article.textContent?.trim()) return null;
    return { extractor: 'readability', html: article.content, title: (article.title ?? '').trim(), stats: statsOfHtml(article.content) };
  } catch {
    return null;
  }
}

export function defuddleExtraction(html: string, url: string | undefined): Extraction | null {
  try {
    const document = documentOf(html);
    if (document.querySelectorAll('*').length > DEFUDDLE_MAX_ELEMENTS) return null;
    // The page already left out what it hides (page-content.ts); linkedom computes no styles.
    // Defuddle picks its site-specific extractors by URL and logs an error for a missing one.
    const pageUrl = url && URL.canParse(url) ? url : 'about:blank';
    const result = new DefuddleClass(document, { url: pageUrl, useAsync: false, removeHiddenElements: false }).parse();
    if (!result.content?.trim()) return null;
    const stats = statsOfHtml(result.content);
    if (stats.words === 0) return null;
    return { extractor: 'defuddle', html: result.content, title: (result.title ?? '').trim(), stats };
  } catch {
    return null;
  }
}

/** The main landmark (or largest text block) without its navigation, sidebars, footers, forms, comments and teasers. */
export function landmarkExtraction(html: string): Extraction | null {
  const document = documentOf(html);
  const main = findMainElement(document);
  if (!main) return null;
  for (const chrome of [...main.querySelectorAll('*')].filter(isChrome)) chrome.remove();
  const stats = textStats(main);
  if (stats.words === 0) return null;
  // Its own heading rather than document.title, which often carries the site's name.
  const heading = main.querySelector('h1')?.textContent?.replace(/\s+/g, ' ').trim();
  return { extractor: 'landmark', html: main.innerHTML, title: heading || (document.title || '').trim(), stats };
}

/**
 * How the Markdown's main content is judged (docs/page-insight.md, "How the article is chosen"):
 * words, words inside links, and the page's main text to measure an extraction against. Pure
 * reading of a linkedom tree; nothing here changes a document.
 */

/** Elements whose text a reader never sees as prose. */
const SKIPPED = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'svg', 'IFRAME', 'OBJECT', 'HEAD']);

/** Containers that hold the page's chrome rather than its text (left out of the main text). */
export const CHROME_SELECTOR =
  'nav, aside, footer, form, [role="navigation"], [role="complementary"], [role="contentinfo"], [role="banner"], [role="search"]';

const segmenter = new Intl.Segmenter('und', { granularity: 'word' });

/** Word-like segments: spaced words in Latin scripts, dictionary words in Chinese and Japanese. */
export function countWords(text: string): number {
  let count = 0;
  for (const segment of segmenter.segment(text)) if (segment.isWordLike) count += 1;
  return count;
}

export interface TextStats {
  words: number;
  /** Words inside `<a href>`. */
  linkWords: number;
}

export const linkDensity = (stats: TextStats) => (stats.words ? stats.linkWords / stats.words : 0);
export const proseWords = (stats: TextStats) => stats.words - stats.linkWords;

/** The words of a subtree and those of its links, script and style text left out. */
export function textStats(root: Node, skip?: (element: Element) => boolean): TextStats {
  const stats: TextStats = { words: 0, linkWords: 0 };
  const walk = (node: Node, inLink: boolean) => {
    if (node.nodeType === 3) {
      const words = countWords(node.nodeValue ?? '');
      stats.words += words;
      if (inLink) stats.linkWords += words;
      return;
    }
    if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) return;
    const element = node.nodeType === 1 ? (node as Element) : null;
    if (element && (SKIPPED.has(element.tagName) || skip?.(element))) return;
    const link = inLink || (element?.tagName === 'A' && element.hasAttribute('href'));
    for (let child = node.firstChild; child; child = child.nextSibling) walk(child, link);
  };
  walk(root, false);
  return stats;
}

/** Blocks named as comments or other stories: beside the article, never part of it. */
const BESIDE =
  /comment|disqus|respond|related|recommend|more-stories|morestories|outbrain|taboola|trending|most-popular|most-read|newsletter/i;

/** Navigation, sidebars, footers, forms, comments and teasers of other stories. */
export const isChrome = (element: Element) =>
  element.matches(CHROME_SELECTOR) || BESIDE.test(`${element.getAttribute('id') ?? ''} ${element.getAttribute('class') ?? ''}`);

/** Whether the element or one of its ancestors is chrome. */
export function insideChrome(element: Element): boolean {
  for (let at: Element | null = element; at; at = at.parentElement) if (isChrome(at)) return true;
  return false;
}

/** Prose words of an element, its navigation, sidebars, footers, forms, comments and teasers left out. */
export const mainStats = (element: Element) => textStats(element, isChrome);

/**
 * The element holding the page's main text: the `<main>` / `[role=main]` / `<article>` landmark
 * with the most prose, else the largest text block (the element whose own paragraphs hold the
 * most prose words). Null for a page without text.
 */
export function findMainElement(document: Document): Element | null {
  let best: { element: Element; prose: number } | null = null;
  for (const element of document.querySelectorAll('main, [role="main"], article, [role="article"]')) {
    if (insideChrome(element)) continue;
    const prose = proseWords(mainStats(element));
    if (!best || prose > best.prose) best = { element, prose };
  }
  if (best && best.prose > 0) return best.element;
  return largestTextBlock(document);
}

const PARAGRAPHS = 'p, pre, blockquote, h1, h2, h3, h4, h5, h6, li, dd, td, figcaption';

/** The parent whose paragraphs (and loose text in a div or section) hold the most prose words. */
function largestTextBlock(document: Document): Element | null {
  const scores = new Map<Element, number>();
  const add = (parent: Element | null, prose: number) => {
    if (parent && prose > 0) scores.set(parent, (scores.get(parent) ?? 0) + prose);
  };
  for (const element of document.querySelectorAll(PARAGRAPHS)) {
    // A paragraph inside another counts once, for the outer one.
    if (element.parentElement?.closest(PARAGRAPHS) || insideChrome(element)) continue;
    add(element.parentElement, proseWords(textStats(element)));
  }
  for (const block of document.querySelectorAll('div, section')) {
    let loose = 0;
    for (let child = block.firstChild; child; child = child.nextSibling)
      if (child.nodeType === 3) loose += countWords(child.nodeValue ?? '');
    if (loose > 0 && !insideChrome(block)) add(block, loose);
  }
  let best: Element | null = null;
  let bestScore = 0;
  for (const [element, score] of scores) {
    if (score > bestScore) {
      best = element;
      bestScore = score;
    }
  }
  return best;
}

/** What is wrong with an extraction, judged against the page's main text; null when it looks right. */
export type Verdict = 'empty' | 'mostly-links' | 'much-shorter' | null;

/** Past this share of words inside links, an extraction is a menu or a list of teasers. */
export const MAX_LINK_DENSITY = 0.5;
/** Below this share of the main text's prose, an extraction missed most of the article. */
export const MIN_SHARE_OF_MAIN = 0.4;

export function judge(extraction: TextStats, main: TextStats): Verdict {
  if (extraction.words === 0) return 'empty';
  if (linkDensity(extraction) > MAX_LINK_DENSITY) return 'mostly-links';
  if (proseWords(extraction) < MIN_SHARE_OF_MAIN * proseWords(main)) return 'much-shorter';
  return null;
}

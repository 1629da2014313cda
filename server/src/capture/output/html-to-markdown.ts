import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { findMainElement, judge, mainStats, proseWords, type TextStats, type Verdict } from './content-judgement.js';
import {
  defuddleExtraction,
  landmarkExtraction,
  readabilityExtraction,
  type Extraction,
  type ExtractorName,
} from './content-extractors.js';

/**
 * The main content of a page as Markdown (format=markdown): Mozilla's Readability picks the article
 * out of the serialized DOM; when what it picked is mostly links or much shorter than the page's
 * main text, Defuddle and then the page's main landmark are tried, judged the same way
 * (content-judgement.ts, docs/page-insight.md "How the article is chosen"). Turndown writes the
 * chosen article as Markdown. All of it runs here in Node on linkedom rather than inside the page:
 * the target's scripts cannot see or tamper with the extraction (prototypes, timers), nothing is
 * injected into the page, and the page's slot is free sooner. The page serializes its DOM after
 * scripts with absolute URLs and without hidden elements (page-content.ts), so what linkedom cannot
 * know (layout, base URL) is already settled.
 */

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed']);

export interface MarkdownResult {
  markdown: string;
  title: string;
  /** Whether an extractor found an article (else the whole body was converted). */
  article: boolean;
  /** Which extractor's article the Markdown holds. */
  extractor: ExtractorName;
  /** What was wrong with Readability's article, when the fallbacks were tried (null: nothing). */
  firstVerdict: Verdict;
}

export type Fallback = 'defuddle' | 'landmark';

export interface ChooseOptions {
  /** The page's URL (Defuddle's site-specific extractors key on it). */
  url?: string | undefined;
  /** The fallbacks to try, in order (default: both). Fewer only to compare them (scripts/bench/content-recall.ts). */
  fallbacks?: readonly Fallback[];
  /** False: convert the whole body, no extractor (an element the caller chose with clipSelector). */
  extract?: boolean;
}

export interface Choice {
  chosen: Extraction | null;
  firstVerdict: Verdict;
  /** The page's main text the extractions were judged against. */
  main: TextStats;
}

/**
 * Readability's article when it looks right; else the first fallback that does. When Readability's
 * article is much shorter than the main text and Defuddle finds it much shorter too, the two
 * independent extractors agree that the rest of the main text is not the article (comments,
 * teasers of other stories): Readability's stays. When nothing looks right, whichever candidate
 * holds the most prose (words outside links).
 */
export function chooseExtraction(html: string, options: ChooseOptions = {}): Choice {
  const mainElement = findMainElement(parseHTML(html).document as unknown as Document);
  const main = mainElement ? mainStats(mainElement) : { words: 0, linkWords: 0 };
  const first = readabilityExtraction(html);
  const firstVerdict = first ? judge(first.stats, main) : 'empty';
  if (first && !firstVerdict) return { chosen: first, firstVerdict, main };
  const candidates: Extraction[] = first ? [first] : [];
  for (const fallback of options.fallbacks ?? ['defuddle', 'landmark']) {
    const next = fallback === 'defuddle' ? defuddleExtraction(html, options.url) : landmarkExtraction(html);
    if (!next) continue;
    const verdict = judge(next.stats, main);
    if (!verdict) return { chosen: next, firstVerdict, main };
    if (first && fallback === 'defuddle' && firstVerdict === 'much-shorter' && verdict === 'much-shorter')
      return { chosen: first, firstVerdict, main };
    candidates.push(next);
  }
  const ranked = candidates.sort((a, b) => proseWords(b.stats) - proseWords(a.stats));
  return { chosen: ranked[0] ?? null, firstVerdict, main };
}

export function htmlToMarkdown(html: string, options: ChooseOptions = {}): MarkdownResult {
  const { document } = parseHTML(html);
  const title = (document.title || '').trim();
  const { chosen, firstVerdict } = options.extract === false ? { chosen: null, firstVerdict: null } : chooseExtraction(html, options);
  const body = chosen ? chosen.html : (document.body?.innerHTML ?? '');
  let markdown = turndown.turndown(body).trim();
  const heading = (chosen?.title || title).trim();
  // The extractors keep the title out of the content; the Markdown starts with it unless it already does.
  if (heading && !markdown.slice(0, heading.length + 20).includes(heading)) markdown = `# ${heading}\n\n${markdown}`;
  return {
    markdown: markdown ? `${markdown}\n` : '',
    title: heading,
    article: Boolean(chosen),
    extractor: chosen?.extractor ?? 'body',
    firstVerdict,
  };
}

import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

/**
 * The main content of a page as Markdown (format=markdown): Mozilla's Readability picks the article
 * out of the serialized DOM, Turndown writes it as Markdown. Both run here in Node on linkedom
 * rather than inside the page: the target's scripts cannot see or tamper with the extraction
 * (prototypes, timers), nothing is injected into the page, and the page's slot is free sooner.
 * The page serializes its DOM after scripts with absolute URLs and without hidden elements
 * (page-content.ts), so what linkedom cannot know (layout, base URL) is already settled.
 */

/** Readability gives up (and returns null) on documents with more elements than this. */
const MAX_ELEMENTS = 100_000;

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed']);

export interface MarkdownResult {
  markdown: string;
  title: string;
  /** Whether Readability found an article (else the whole body was converted). */
  article: boolean;
}

export function htmlToMarkdown(html: string): MarkdownResult {
  const { document } = parseHTML(html);
  const title = (document.title || '').trim();
  let article: { title?: string | null; content?: string | null; textContent?: string | null } | null = null;
  try {
    // Readability changes the document it reads: it gets its own parse.
    article = new Readability(parseHTML(html).document as unknown as Document, {
      maxElemsToParse: MAX_ELEMENTS,
      keepClasses: false,
    }).parse();
  } catch {
    article = null;
  }
  const found = Boolean(article?.content && article.textContent?.trim());
  const body = found ? article!.content! : (document.body?.innerHTML ?? '');
  let markdown = turndown.turndown(body).trim();
  const heading = (article?.title || title).trim();
  // Readability keeps the title out of the content; the Markdown starts with it unless it already does.
  if (heading && !markdown.slice(0, heading.length + 20).includes(heading)) markdown = `# ${heading}\n\n${markdown}`;
  return { markdown: markdown ? `${markdown}\n` : '', title: heading, article: found };
}

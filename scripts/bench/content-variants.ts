/**
 * The extraction variants content-recall.ts compares, on the very HTML format=markdown feeds its
 * extractors: a page of the bench's own browser loads the saved page from the loopback fixture
 * server (every other request aborted), serializes it with the service's own in-page function
 * (page-content.ts) and each variant of chooseExtraction (html-to-markdown.ts) reads that HTML.
 */
import type { Browser } from 'puppeteer-core';
import { chooseExtraction, htmlToMarkdown, type Fallback } from '../../server/src/capture/output/html-to-markdown.js';
import { serializeInPage } from '../../server/src/capture/output/page-content.js';

export interface Variant {
  name: string;
  fallbacks: readonly Fallback[];
}

export const VARIANTS: Variant[] = [
  { name: 'readability only (before)', fallbacks: [] },
  { name: 'readability → defuddle', fallbacks: ['defuddle'] },
  { name: 'readability → landmark', fallbacks: ['landmark'] },
  { name: 'readability → defuddle → landmark (shipped)', fallbacks: ['defuddle', 'landmark'] },
];

export interface VariantRun {
  markdown: string;
  extractor: string;
  firstVerdict: string | null;
  ms: number;
}

/** The HTML the service's markdown path serializes for `url` (null when the page did not load). */
export async function serializedPage(browser: Browser, url: string): Promise<string | null> {
  const page = await browser.newPage();
  const origin = new URL(url).origin;
  try {
    await page.setViewport({ width: 1280, height: 800 });
    await page.setRequestInterception(true);
    page.on('request', (request) => void (request.url().startsWith(origin) ? request.continue() : request.abort()));
    await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
    // tsx keeps function names with a helper (__name) the page does not have; the service's own build does not.
    await page.evaluate('globalThis.__name ??= (fn) => fn');
    return await page.evaluate(serializeInPage, { selector: null, dropHidden: true });
  } catch (error) {
    console.log(`${url}: ${String(error).slice(0, 300)}`);
    return null;
  } finally {
    await page.close();
  }
}

export function runVariant(html: string, pageUrl: string, variant: Variant): VariantRun {
  const started = performance.now();
  const result = htmlToMarkdown(html, { url: pageUrl, fallbacks: variant.fallbacks });
  return {
    markdown: result.markdown,
    extractor: result.extractor,
    firstVerdict: result.firstVerdict,
    ms: performance.now() - started,
  };
}

/** The main text's size the extractions were judged against (for the per-page report). */
export function mainTextOf(html: string, pageUrl: string) {
  return chooseExtraction(html, { url: pageUrl, fallbacks: [] }).main;
}

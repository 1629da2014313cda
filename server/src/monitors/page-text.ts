import type { Page } from 'puppeteer-core';
import { cutUtf8, serializeInPage } from '../capture/output/page-content.js';

/** The most of a page's text kept for the next run to compare with (UTF-8 bytes); a longer text is cut. */
export const PAGE_TEXT_MAX_BYTES = 1024 * 1024;

export interface PageTextStep {
  /** A CaptureCommand.readPage step: runs once the page has loaded and been cleaned, before the shot. */
  step: (page: Page) => Promise<void>;
  /** The page's text once the step ran; undefined before, or when the page could not be read. */
  text(): string | undefined;
}

/**
 * The page's main text, as format=markdown reads it (page-content.ts serializes the DOM after
 * scripts, html-to-markdown.ts picks the article and writes Markdown), without the elements of
 * `ignoreSelectors`: their words never count as a change, as their pixels do not (they are hidden
 * in the shot). Read in the same capture as the image, so a run costs one page load, not two.
 */
export function pageTextStep(ignoreSelectors: readonly string[]): PageTextStep {
  let text: string | undefined;
  return {
    async step(page) {
      // A page that cannot be serialized still gets its image compared: its text is then unknown, not empty.
      const html = await page
        .evaluate(serializeInPage, { selector: null, dropHidden: true, leaveOut: [...ignoreSelectors] })
        .catch(() => null);
      if (html === null) return;
      // Loaded at first use, as format=markdown loads it (page-content.ts).
      const { htmlToMarkdown } = await import('../capture/output/html-to-markdown.js');
      const markdown = htmlToMarkdown(html, { url: page.url() }).markdown;
      text = cutUtf8(markdown, PAGE_TEXT_MAX_BYTES).buffer.toString('utf8');
    },
    text: () => text,
  };
}

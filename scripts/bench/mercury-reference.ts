/**
 * The independent extractor of content-recall.ts: the Mercury parser's own browser build
 * (`dist/mercury.web.js` of the checkout, run as it is) in a headless Chromium page of its own,
 * parsing each saved page with the URL it was saved from, so the site's hand-written extractor
 * (content selectors written and tested for that page) picks the article. Every request the
 * parse makes (the page's images) is aborted: nothing leaves the machine.
 */
import type { Browser, Page } from 'puppeteer-core';
import { showFile } from './mercury-fixtures.js';

export interface MercuryReference {
  /** The article's text as Mercury gives it (contentType text), or null when it found none. */
  text(url: string, html: string): Promise<string | null>;
}

interface MercuryGlobal {
  parse(url: string, options: { html: string; fallback: boolean; contentType: 'text' }): Promise<{ content?: string | null } | null>;
}

export function mercuryReference(repo: string, browser: Browser): MercuryReference {
  const bundle = showFile(repo, 'dist/mercury.web.js').toString('utf8');
  const fresh = async (): Promise<Page> => {
    const page = await browser.newPage();
    await page.setRequestInterception(true);
    page.on('request', (request) => void (request.url() === 'about:blank' ? request.continue() : request.abort()));
    await page.goto('about:blank');
    await page.addScriptTag({ content: bundle });
    return page;
  };
  return {
    async text(url, html) {
      // A page per fixture: Mercury's web build parses into the page's own document.
      const page = await fresh();
      try {
        return await page.evaluate(
          async (url, html) => {
            const mercury = (globalThis as unknown as { Mercury: MercuryGlobal }).Mercury;
            const result = await mercury.parse(url, { html, fallback: false, contentType: 'text' });
            return result?.content?.trim() || null;
          },
          url,
          html,
        );
      } finally {
        await page.close();
      }
    },
  };
}

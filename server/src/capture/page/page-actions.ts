import type { Page } from 'puppeteer-core';

/** The selectors that are not valid CSS (querySelector throws a SyntaxError for them). */
export async function invalidSelectors(page: Page, selectors: string[]): Promise<string[]> {
  if (selectors.length === 0) return [];
  return page.evaluate((list: string[]) => {
    return list.filter((selector) => {
      try {
        document.createDocumentFragment().querySelector(selector);
        return false;
      } catch {
        return true;
      }
    });
  }, selectors);
}

/** Removes every element matching the selectors; an invalid selector is reported, not thrown from the page. */
export async function removeElements(page: Page, selectors: string[]): Promise<string[]> {
  return page.evaluate((list: string[]) => {
    const invalid: string[] = [];
    for (const selector of list) {
      try {
        document.querySelectorAll(selector).forEach((el) => el.remove());
      } catch {
        invalid.push(selector);
      }
    }
    return invalid;
  }, selectors);
}

export async function documentSize(page: Page): Promise<{ width: number; height: number }> {
  return page.evaluate(() => ({
    width: Math.max(document.documentElement.scrollWidth, document.body?.scrollWidth ?? 0, window.innerWidth),
    height: Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, window.innerHeight),
  }));
}

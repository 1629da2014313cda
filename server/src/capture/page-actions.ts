import type { Page } from 'puppeteer';

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

/**
 * Scrolls to the bottom in steps spread over `durationMs` so lazy content loads, waits (bounded)
 * for the images that started loading, then returns to the top.
 */
export async function scrollThrough(page: Page, durationMs: number, imageWaitMs: number): Promise<void> {
  await page.evaluate(
    async (duration: number, imageWait: number) => {
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const height = () => Math.max(document.body?.scrollHeight ?? 0, document.documentElement.scrollHeight);
      const step = Math.max(200, Math.floor(window.innerHeight * 0.8));
      const steps = Math.max(1, Math.ceil(height() / step));
      const pause = Math.max(10, Math.floor(duration / steps));
      // The page may grow while we scroll (infinite lists): bounded by the duration plus one pass.
      const stopAt = Date.now() + duration + 2000;
      for (let y = 0; y < height() && Date.now() < stopAt; y += step) {
        window.scrollTo(0, y);
        await sleep(pause);
      }
      window.scrollTo(0, height());
      const pending = Array.from(document.images).filter((img) => !img.complete);
      await Promise.race([
        Promise.all(
          pending.map(
            (img) =>
              new Promise((done) => {
                img.addEventListener('load', done, { once: true });
                img.addEventListener('error', done, { once: true });
              }),
          ),
        ),
        sleep(imageWait),
      ]);
      window.scrollTo(0, 0);
      await sleep(50);
    },
    durationMs,
    imageWaitMs,
  );
}

export async function documentSize(page: Page): Promise<{ width: number; height: number }> {
  return page.evaluate(() => ({
    width: Math.max(document.documentElement.scrollWidth, document.body?.scrollWidth ?? 0, window.innerWidth),
    height: Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, window.innerHeight),
  }));
}

import type { Page } from 'puppeteer';

export interface ScrollOutcome {
  /** The page grew while it was scrolled and had not stopped growing when the scroll ended (duration or height budget). */
  stillGrowing: boolean;
}

/** Pause after each step: time for lazy content that came into view to ask for its data. */
const STEP_PAUSE_MS = 100;
/** At the bottom, how long the height must stay the same before the page counts as fully loaded. */
const STEADY_MS = 1_000;

/**
 * Scrolls through the page so lazy content loads (fullPageScroll), at a fixed pace: one step of
 * 80 % of the viewport every STEP_PAUSE_MS. While the page grows (infinite lists), it keeps going,
 * until the bottom stays put for STEADY_MS, `durationMs` has passed or the page is taller than
 * `maxHeightCss` (the full-page budget). The pace never depends on the duration or on the first
 * height (issue #30: the pause was the duration shared among the first height's steps, so a longer
 * duration scrolled slower and loaded less); a longer duration only ever scrolls further. Then it
 * waits (bounded) for the images that started loading and returns to the top.
 */
export async function scrollThrough(page: Page, durationMs: number, maxHeightCss: number, imageWaitMs: number): Promise<ScrollOutcome> {
  return page.evaluate(
    async (duration: number, maxHeight: number, imageWait: number, stepPause: number, steadyMs: number) => {
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const height = () => Math.max(document.body?.scrollHeight ?? 0, document.documentElement.scrollHeight);
      const step = Math.max(200, Math.floor(window.innerHeight * 0.8));
      const stopAt = Date.now() + duration;
      const firstHeight = height();
      let y = 0;
      let steady = false;
      while (Date.now() < stopAt && height() < maxHeight) {
        const bottom = height() - window.innerHeight;
        if (y < bottom) {
          y = Math.min(y + step, bottom);
          window.scrollTo(0, y);
          await sleep(stepPause);
          continue;
        }
        // At the bottom: wait for the page to grow (an infinite list loading its next part).
        const at = height();
        const until = Math.min(Date.now() + steadyMs, stopAt);
        while (Date.now() < until && height() === at) await sleep(50);
        if (height() === at && Date.now() < stopAt) {
          steady = true;
          break;
        }
        if (height() === at) steady = true;
      }
      const stillGrowing = !steady && height() > firstHeight;
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
      return { stillGrowing };
    },
    durationMs,
    maxHeightCss,
    imageWaitMs,
    STEP_PAUSE_MS,
    STEADY_MS,
  );
}

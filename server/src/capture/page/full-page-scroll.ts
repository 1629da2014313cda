import type { Page } from 'puppeteer-core';

export interface ScrollOutcome {
  /** The page grew while it was scrolled and had not stopped growing when the scroll ended (duration or height budget). */
  stillGrowing: boolean;
}

/** Longest pause after each step: time for lazy content that came into view to ask for its data. */
const STEP_PAUSE_MS = 100;
/** Shortest pause: a short duration on a long page still lets each step's content see the viewport. */
const MIN_STEP_PAUSE_MS = 10;
/** At the bottom, how long the height must stay the same before the page counts as fully loaded. */
const STEADY_MS = 1_000;

/**
 * Scrolls through the page so lazy content loads (fullPageScroll), one step of 80 % of the viewport
 * per pause. While the page grows (infinite lists), it keeps going, until the bottom stays put for
 * STEADY_MS, `durationMs` has passed or the page is taller than `maxHeightCss` (the full-page
 * budget). The pause is the duration shared among the first height's steps, so that a short
 * duration still passes over the whole page, but never longer than STEP_PAUSE_MS: without that
 * ceiling a longer duration scrolled a growing page slower and loaded less. With it, the steps made
 * by any moment never decrease with the duration: a longer duration only scrolls further. Then it
 * waits (bounded) for the images that started loading and returns to the top.
 */
export async function scrollThrough(page: Page, durationMs: number, maxHeightCss: number, imageWaitMs: number): Promise<ScrollOutcome> {
  return page.evaluate(
    async (duration: number, maxHeight: number, imageWait: number, pauses: [number, number], steadyMs: number) => {
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const height = () => Math.max(document.body?.scrollHeight ?? 0, document.documentElement.scrollHeight);
      const step = Math.max(200, Math.floor(window.innerHeight * 0.8));
      const stopAt = Date.now() + duration;
      const firstHeight = height();
      const stepPause = Math.min(pauses[1], Math.max(pauses[0], Math.floor(duration / Math.max(1, Math.ceil(firstHeight / step)))));
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
    [MIN_STEP_PAUSE_MS, STEP_PAUSE_MS] as [number, number],
    STEADY_MS,
  );
}

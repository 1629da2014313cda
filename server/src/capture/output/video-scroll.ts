import type { ScrollEasing } from '@daguerre/contract';
import type { Page } from 'puppeteer-core';
import { CaptureError } from '../capture-error.js';

/** Progress 0..1 of the scroll at time 0..1 (cubic curves, as CSS's ease-in/out family). */
export const EASINGS: Record<ScrollEasing, (t: number) => number> = {
  linear: (t) => t,
  'ease-in': (t) => t * t * t,
  'ease-out': (t) => 1 - (1 - t) ** 3,
  'ease-in-out': (t) => (t < 0.5 ? 4 * t * t * t : 1 - (-2 * t + 2) ** 3 / 2),
};

/**
 * The scroll position of frame `index` of `frames`: the first at 0, the last at `distance`, never
 * going back. A video of one frame is its first moment: the top.
 */
export function scrollPosition(easing: ScrollEasing, index: number, frames: number, distance: number): number {
  const t = frames <= 1 ? 0 : index / (frames - 1);
  return Math.round(EASINGS[easing](Math.min(1, Math.max(0, t))) * distance);
}

/**
 * Puts the page at the top and reports how far the video scrolls: to the bottom, or to the top of
 * the element of `scrollToSelector` (as far as the page allows). Smooth scrolling is turned off so
 * each frame shows exactly its position.
 */
export async function prepareScroll(page: Page, scrollToSelector: string | undefined): Promise<number> {
  const result = await page.evaluate((selector: string | null) => {
    for (const element of [document.documentElement, document.body]) element?.style.setProperty('scroll-behavior', 'auto', 'important');
    window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
    const scroller = document.scrollingElement ?? document.documentElement;
    const bottom = Math.max(0, scroller.scrollHeight - window.innerHeight);
    if (selector === null) return { distance: bottom, found: true };
    let target: Element | null;
    try {
      target = document.querySelector(selector);
    } catch {
      return { distance: 0, found: false, invalid: true };
    }
    if (!target) return { distance: 0, found: false };
    return { distance: Math.min(bottom, Math.max(0, Math.round(target.getBoundingClientRect().top + window.scrollY))), found: true };
  }, scrollToSelector ?? null);
  if ('invalid' in result)
    throw new CaptureError('invalid-selector', `Validation failed: scrollToSelector: "${scrollToSelector}" is not a valid CSS selector`, {
      details: [{ field: 'scrollToSelector', message: 'not a valid CSS selector', value: scrollToSelector }],
    });
  if (!result.found)
    throw new CaptureError(
      'element-not-found',
      `scrollToSelector "${scrollToSelector}" matches no element on the page; nothing was charged`,
    );
  return result.distance;
}

/**
 * Scrolls to `top`. Returns where the page is now (the page may clamp or move it) and its bottom as
 * it is now: lazy content below the fold makes the page grow while the video scrolls, and the end
 * follows it. The frame showing it is the screencast's (video-frames.ts), which waits for it.
 */
export async function scrollTo(page: Page, top: number): Promise<{ top: number; bottom: number }> {
  return page.evaluate((y: number) => {
    window.scrollTo({ top: y, left: 0, behavior: 'instant' });
    const scroller = document.scrollingElement ?? document.documentElement;
    return { top: window.scrollY, bottom: Math.max(0, scroller.scrollHeight - window.innerHeight) };
  }, top);
}

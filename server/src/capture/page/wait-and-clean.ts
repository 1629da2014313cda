import type { CaptureOptions } from '@daguerre/contract';
import type { Page } from 'puppeteer-core';
import { CaptureError } from '../capture-error.js';
import { scrollThrough, type ScrollOutcome } from './full-page-scroll.js';
import { finishMotion } from './motion.js';
import { removeElements } from './page-actions.js';
import { applyPageControl } from './page-control.js';
import { clickElement, runScripts, scrollToElement } from './page-interactions.js';
import { guard, type GuardedRequest } from './stage-guard.js';

/** Milliseconds left before the deadline, keeping `reserveMs` to answer. */
export const remainingMs = (request: GuardedRequest, reserveMs = 0) => Math.max(1, request.deadline - Date.now() - reserveMs);

async function waitForSelector(page: Page, selector: string, request: GuardedRequest): Promise<void> {
  // Leave time to answer before the deadline: the caller gets a clear message, not a timeout.
  const timeout = remainingMs(request, 1_500);
  const found = await guard(
    page.waitForSelector(selector, { timeout }).then(
      () => true,
      (error: unknown) => {
        if (error instanceof Error && error.name === 'TimeoutError') return false;
        throw error;
      },
    ),
    request,
    'waiting for waitForSelector',
  );
  if (!found) {
    throw new CaptureError(
      'element-not-found',
      `waitForSelector: no element matched "${selector}" within ${timeout} ms; nothing was charged`,
    );
  }
}

/**
 * The stage between load and capture, in this order: wait for waitForSelector; add the page
 * control CSS (hideSelectors, styles, reducedMotion: hidden overlays no longer catch the click);
 * run scripts; click; scroll through a full page (so what the click loaded is scrolled too);
 * remove removeSelectors (after the scroll, which may have added them); scroll to scrollIntoView;
 * then the delay; last, with reducedMotion, the motion still running is finished (motion.ts).
 * `maxHeightCss` is the full-page budget's height, where a growing page stops being scrolled.
 */
export async function waitAndClean(
  page: Page,
  options: CaptureOptions,
  request: GuardedRequest,
  maxHeightCss = Number.POSITIVE_INFINITY,
): Promise<ScrollOutcome> {
  let scrolled: ScrollOutcome = { stillGrowing: false };
  if (options.waitForSelector) await waitForSelector(page, options.waitForSelector, request);
  await guard(applyPageControl(page, options), request, 'applying page options');
  if (options.scripts) await guard(runScripts(page, options.scripts, remainingMs(request, 1_500)), request, 'running scripts');
  if (options.click) await guard(clickElement(page, options.click, Math.min(2_000, remainingMs(request, 3_000))), request, 'clicking');
  if (options.fullPage && options.fullPageScroll) {
    // The duration is the request's own (its deadline was lengthened by it); never past the deadline.
    const duration = Math.min(options.fullPageScrollDuration, remainingMs(request, 3_000));
    scrolled = await guard(
      scrollThrough(page, duration, maxHeightCss, Math.min(5_000, remainingMs(request, 3_000))),
      request,
      'scrolling the page',
    );
  }
  if (options.removeSelectors?.length) {
    const invalid = await guard(removeElements(page, options.removeSelectors), request, 'removing elements');
    if (invalid.length)
      throw new CaptureError('invalid-selector', `removeSelectors: not valid CSS selectors: ${invalid.join(', ')}`, {
        details: invalid.map((value) => ({ field: 'removeSelectors', message: 'not a valid CSS selector', value })),
      });
  }
  if (options.scrollIntoView) await guard(scrollToElement(page, options.scrollIntoView), request, 'scrolling to scrollIntoView');
  if (options.delay > 0) await guard(new Promise((r) => setTimeout(r, options.delay)), request, 'waiting for the delay');
  if (options.reducedMotion) await guard(finishMotion(page), request, 'finishing animations');
  return scrolled;
}

import type { CaptureOptions } from '@daguerre/contract';
import type { Page } from 'puppeteer-core';

type ControlOptions = Pick<CaptureOptions, 'hideSelectors' | 'styles'> & Partial<Pick<CaptureOptions, 'reducedMotion'>>;

/** Zero-length animations and transitions with fill-mode forwards: each shows its end state at once. */
const FINISH_MOTION = `*, *::before, *::after { animation-duration: 0s !important; animation-delay: 0s !important;
  animation-iteration-count: 1 !important; animation-fill-mode: forwards !important;
  transition-duration: 0s !important; transition-delay: 0s !important; scroll-behavior: auto !important; }`;

/** CSS for reducedMotion, the `hideSelectors` elements (hidden, layout kept), then the caller's `styles`. */
export function controlCss(options: ControlOptions): string {
  const hidden = (options.hideSelectors ?? []).map((selector) => `${selector} { visibility: hidden !important; }`);
  return [options.reducedMotion ? FINISH_MOTION : '', ...hidden, options.styles ?? ''].filter((rule) => rule.length > 0).join('\n');
}

/**
 * Adds hideSelectors and styles to the loaded document as one style element. It lives in the
 * document, so the next navigation on a reused page drops it.
 */
export async function applyPageControl(page: Page, options: ControlOptions): Promise<void> {
  const css = controlCss(options);
  if (css.length === 0) return;
  await page.evaluate((text: string) => {
    const style = document.createElement('style');
    style.setAttribute('data-daguerre', 'page-control');
    style.textContent = text;
    (document.head ?? document.documentElement).appendChild(style);
  }, css);
}

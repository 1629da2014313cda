import type { CaptureOptions } from '@rendershot/contract';
import type { Page } from 'puppeteer';

/** CSS that hides the `hideSelectors` elements (layout kept), followed by the caller's `styles`. */
export function controlCss(options: Pick<CaptureOptions, 'hideSelectors' | 'styles'>): string {
  const hidden = (options.hideSelectors ?? []).map((selector) => `${selector} { visibility: hidden !important; }`);
  return [...hidden, options.styles ?? ''].filter((rule) => rule.length > 0).join('\n');
}

/**
 * Adds hideSelectors and styles to the loaded document as one style element. It lives in the
 * document, so the next navigation on a reused page drops it.
 */
export async function applyPageControl(page: Page, options: Pick<CaptureOptions, 'hideSelectors' | 'styles'>): Promise<void> {
  const css = controlCss(options);
  if (css.length === 0) return;
  await page.evaluate((text: string) => {
    const style = document.createElement('style');
    style.setAttribute('data-rendershot', 'page-control');
    style.textContent = text;
    (document.head ?? document.documentElement).appendChild(style);
  }, css);
}

import type { Page } from 'puppeteer-core';

export interface OverlayCleanupResult {
  /** Full-screen overlays hidden. */
  removed: number;
  /** Scroll locks undone on <html> or <body>. */
  unlocked: number;
}

/**
 * What a consent dialog leaves behind once the dialog itself is refused or hidden, or what covers
 * the page when no rule knew the dialog:
 * - a full-screen backdrop: position fixed, covering the viewport (95 % each way), z-index of 1 000
 *   or more, visible, and either empty of text (a dimming layer) or a box whose text is about
 *   cookies, consent or privacy (and short: a notice, not an article). A layer that holds the
 *   page's <main> or <article> is the page's own layout and stays. Open shadow roots are searched
 *   too (some consent managers render in one).
 * - a scroll lock: overflow hidden (or clip) on <html> or <body> while the content is taller than
 *   the viewport; the overflow is made visible again, and a <body> pinned with position: fixed
 *   (the other common lock) is released when a backdrop was removed.
 */
const CLEANUP = `(() => {
  const viewportWidth = window.innerWidth;
  const viewportHeight = window.innerHeight;
  const root = document.documentElement;
  const body = document.body;
  const consentWords = /cookie|consent|gdpr|privacy|tracking|personal data|datenschutz|einwilligung|rgpd|privacidad|confidentialit/i;
  const hidden = [];
  let removed = 0;
  const visit = (scope) => {
    for (const element of scope.querySelectorAll('*')) {
      if (element.shadowRoot) visit(element.shadowRoot);
      if (element === root || element === body || !(element instanceof HTMLElement)) continue;
      // offsetParent is null only for fixed elements and for what is not rendered: a cheap first sieve.
      if (element.offsetParent !== null) continue;
      const style = getComputedStyle(element);
      if (style.position !== 'fixed' || style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) < 0.05) continue;
      if (!(parseInt(style.zIndex, 10) >= 1000)) continue;
      const box = element.getBoundingClientRect();
      if (box.left > viewportWidth * 0.05 || box.top > viewportHeight * 0.05 || box.right < viewportWidth * 0.95 || box.bottom < viewportHeight * 0.95) continue;
      if (hidden.some((done) => done.contains(element))) continue;
      // The page's own content in a full-screen layer (an app shell) stays.
      if (element.querySelector('main, article, [role="main"]')) continue;
      const text = (element.innerText || '').trim();
      if (text.length > 20 && (text.length > 3000 || !consentWords.test(text))) continue;
      element.style.setProperty('display', 'none', 'important');
      hidden.push(element);
      removed++;
    }
  };
  visit(document);

  let unlocked = 0;
  const contentHeight = Math.max(root.scrollHeight, body ? body.scrollHeight : 0);
  if (contentHeight > viewportHeight + 1) {
    for (const element of [root, body]) {
      if (!element) continue;
      const style = getComputedStyle(element);
      if (['hidden', 'clip'].includes(style.overflowY) || ['hidden', 'clip'].includes(style.overflow)) {
        element.style.setProperty('overflow', 'visible', 'important');
        unlocked++;
      }
      if (element === body && style.position === 'fixed' && removed > 0) {
        body.style.setProperty('position', 'static', 'important');
        unlocked++;
      }
    }
  }
  return { removed, unlocked };
})()`;

/** Runs the cleanup in the page's top document (see CLEANUP). */
export async function cleanupOverlays(page: Page): Promise<OverlayCleanupResult> {
  try {
    return (await page.mainFrame().evaluate(CLEANUP)) as OverlayCleanupResult;
  } catch {
    return { removed: 0, unlocked: 0 };
  }
}

import type { Page } from 'puppeteer-core';
import { CaptureError } from '../capture-error.js';
import { ignoreBecause } from '../../ignore-error.js';

const MAX_MESSAGE = 500;

/** The message of what the page threw, as puppeteer reports it, without its stack. */
function thrownMessage(error: unknown): string {
  // Puppeteer keeps the page's error name (SyntaxError, TypeError…) apart from the message.
  const text = error instanceof Error ? `${error.name && error.name !== 'Error' ? `${error.name}: ` : ''}${error.message}` : String(error);
  const firstLine = text.split('\n')[0]!.trim();
  return firstLine.length > MAX_MESSAGE ? `${firstLine.slice(0, MAX_MESSAGE)}…` : firstLine;
}

/**
 * Runs the caller's `scripts` in the page's main world as the body of an async function, so that
 * `await` and `return promise` work, and waits for it at most `timeoutMs`. DevTools evaluation is
 * not subject to the page's Content-Security-Policy, so a strict page still runs it. What it throws
 * (or a rejection, or a syntax error) is the caller's 400 with the message.
 */
export async function runScripts(page: Page, code: string, timeoutMs: number): Promise<void> {
  // The newline before the closing brace keeps a trailing `// comment` from swallowing it.
  const wrapped = `(async () => {\n${code}\n})().then(() => undefined)`;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
  const run = page.evaluate(wrapped).then(
    () => 'done' as const,
    (error: unknown) => {
      if (page.isClosed()) throw error;
      if (error instanceof Error && /Execution context was destroyed|Target closed|Session closed/i.test(error.message)) throw error;
      // The script itself is not echoed back: it may be long.
      throw new CaptureError('script-failed', `scripts: the script failed: ${thrownMessage(error)}; nothing was charged`, {
        details: [{ field: 'scripts', message: thrownMessage(error) }],
      });
    },
  );
  try {
    const outcome = await Promise.race([run, late]);
    if (outcome === 'late') {
      run.catch(ignoreBecause('reported late below: how the script ends no longer matters'));
      // The page is busy with it: renderer.ts does not reuse it.
      throw new CaptureError(
        'script-still-running',
        `scripts: the script did not finish within ${timeoutMs} ms (a returned promise must settle before the capture deadline); nothing was charged`,
      );
    }
  } finally {
    clearTimeout(timer);
  }
}

const notFound = (field: string, selector: string) =>
  new CaptureError('element-not-found', `${field}: no element matched "${selector}"; nothing was charged`, {
    details: [{ field, message: 'no element matched the selector', value: selector }],
  });

/**
 * Clicks the first element matching `selector` as a user would (scrolled into view, a trusted
 * mouse click at its centre), then lets the page react: what the click fetched (a "load more"
 * request) is waited for until the network has been quiet for 200 ms, at most `settleMs`, and the
 * result is laid out. Slower content needs `delay`.
 */
export async function clickElement(page: Page, selector: string, settleMs: number): Promise<void> {
  const element = await page.$(selector);
  if (!element) throw notFound('click', selector);
  try {
    await element.click();
  } catch (error) {
    // Puppeteer cannot click an element without a box (display: none, detached).
    if (error instanceof Error && /not clickable|not an Element|no box|not visible/i.test(error.message)) {
      throw new CaptureError(
        'element-not-clickable',
        `click: the element matching "${selector}" cannot be clicked (it is hidden or has no size); nothing was charged`,
        {
          details: [{ field: 'click', message: 'the element is hidden or has no size', value: selector }],
        },
      );
    }
    throw error;
  } finally {
    await element.dispose().catch(ignoreBecause('a handle whose page is gone needs no disposing'));
  }
  // A timeout is no error: requests of earlier documents on a reused page may never be seen to finish.
  await page
    .waitForNetworkIdle({ idleTime: 200, timeout: settleMs })
    .catch(ignoreBecause('a network that never goes idle only ends the wait'));
  // Two animation frames: the DOM changes made by the click are laid out and painted.
  await page.evaluate(() => new Promise<void>((done) => requestAnimationFrame(() => requestAnimationFrame(() => done()))));
}

/** Scrolls the first element matching `selector` to the top of the viewport, instantly (no smooth scrolling). */
export async function scrollToElement(page: Page, selector: string): Promise<void> {
  const found = await page.evaluate((query: string) => {
    const element = document.querySelector(query);
    if (!element) return false;
    element.scrollIntoView({ block: 'start', inline: 'nearest', behavior: 'instant' });
    return new Promise<boolean>((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))));
  }, selector);
  if (!found) throw notFound('scrollIntoView', selector);
}

import type { CDPSession, Page } from 'puppeteer-core';

/**
 * The DevTools session whose Page events the pool listens to (commits, navigations asked for):
 * puppeteer's own session of the page, whose Page domain puppeteer keeps on from the page's start.
 *
 * The pool sends its commands (freezing, clearing, emulation) on a session of its own, but enabling
 * the Page domain there too made Chromium send every Page event of the page twice, once to each
 * session: serialized by the browser, written to the pipe and parsed by the service each time. On a
 * news page with 17 iframes that was about 100 of a capture's 416 messages (frames attached,
 * navigated, started and stopped loading, lifecycle events).
 *
 * puppeteer's session is internal API (`_client()`, present on every CdpPage since puppeteer 19):
 * where it is missing the pool's own session gets the Page domain instead, as before, and
 * `tests/integration/page-events-session.test.ts` fails.
 */
export async function pageEventsSession(page: Page, own: CDPSession): Promise<CDPSession> {
  const client = (page as unknown as { _client?: () => CDPSession })._client;
  if (typeof client === 'function') return client.call(page);
  await own.send('Page.enable');
  return own;
}

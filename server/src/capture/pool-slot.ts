import type { Browser, BrowserContext, CDPSession, HTTPRequest, Page } from 'puppeteer';
import type { BrowserManager } from './browser-manager.js';

/**
 * One pooled browser context and its page: how it is opened, checked and reset between captures
 * of the same organization.
 */

/** A warm incognito context with one open page, ready for the next capture. */
export interface Slot {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  session: CDPSession;
  generation: number;
  uses: number;
  /** Origins the page talked to: their storage is cleared before the slot is reused. */
  origins: Set<string>;
  /** Set when anything went wrong: the slot is destroyed instead of reused. */
  doubtful: boolean;
  /** One-off contexts (a request with its own proxy) are never pooled. */
  dedicated: boolean;
  /** The organization whose pages this context's renderer has loaded: it serves no other (issue #14). */
  organizationId?: string;
}


const BLANK = 'about:blank';

/** Pages whose renderer crashed or errored while idle: their slot is replaced, not reused. */
const brokenPages = new WeakSet<Page>();

/**
 * Runs in every document before its own scripts: a capture never opens windows. It also defines
 * `__name`, which tsx (esbuild keepNames) wraps around functions we pass to page.evaluate.
 */
const PAGE_GUARDS = `(() => {
  try { Object.defineProperty(window, 'open', { value: () => null, configurable: false, writable: false }); } catch {}
  try { if (!('__name' in globalThis)) Object.defineProperty(globalThis, '__name', { value: (fn) => fn, enumerable: false }); } catch {}
})();`;

export async function openSlot(manager: BrowserManager, proxyServer?: string): Promise<Slot> {
  const browser = await manager.get();
  const generation = manager.generation;
  const context = await browser.createBrowserContext({
    downloadBehavior: { policy: 'deny' },
    // With a proxy, everything goes through it: Chromium would otherwise bypass it for loopback.
    ...(proxyServer ? { proxyServer, proxyBypassList: ['<-loopback>'] } : {}),
  });
  try {
    const page = await context.newPage();
    const session = await page.createCDPSession();
    const slot: Slot = { browser, context, page, session, generation, uses: 0, origins: new Set(), doubtful: false, dedicated: Boolean(proxyServer) };
    await page.evaluateOnNewDocument(PAGE_GUARDS);
    // A new document, so that the guards exist before the first capture (html mode writes into it).
    await page.goto(BLANK);
    page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
    // A renderer that dies while the slot is idle (out of memory, killed): the next borrower gets a fresh page.
    // (Kept by page rather than on the slot: a spare's page moves into another slot object.)
    page.on('error', () => brokenPages.add(page));
    page.on('request', (request: HTTPRequest) => {
      const origin = originOf(request.url());
      if (origin) slot.origins.add(origin);
    });
    // Popups from target=_blank links or scripts are closed the moment they appear.
    context.on('targetcreated', (target) => {
      if (target.type() === 'page') void target.page().then((popup) => (popup && popup !== page ? popup.close() : undefined)).catch(() => undefined);
    });
    return slot;
  } catch (error) {
    await context.close().catch(() => undefined);
    throw error;
  }
}

/** Whether a slot's browser and page are still the live ones. */
export function usable(slot: Slot, generation: number): boolean {
  return slot.generation === generation && slot.browser.connected && !slot.page.isClosed() && !brokenPages.has(slot.page);
}

function originOf(url: string): string | undefined {
  if (!url.startsWith('http:') && !url.startsWith('https:')) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Unloads the capture's document while keeping its renderer process. A browser-initiated
 * navigation to about:blank (page.goto) makes Chromium start a new renderer for the next page
 * (site isolation), which costs the next capture ~50 ms and a process start; an about:blank the
 * page navigates to itself stays in the page's process, so the next capture of the same site
 * reuses it, as a kept puppeteer page does. A page that will not leave (a busy script, a
 * beforeunload handler) gets the browser-initiated navigation instead, and so does one whose
 * renderer has served enough captures (`keepRenderer` false): a kept renderer grows by about 6 MB a
 * capture, and a new renderer costs ~0.1 CPU-s where a new context costs ~1.1.
 */
async function unload(page: Page, keepRenderer: boolean): Promise<void> {
  if (keepRenderer && page.url() !== BLANK) {
    try {
      await Promise.all([
        page.waitForNavigation({ timeout: 2_000 }),
        page.evaluate(() => window.location.replace('about:blank')),
      ]);
    } catch {
      // Falls through to the browser-initiated navigation.
    }
  }
  if (!keepRenderer || page.url() !== BLANK) await page.goto(BLANK, { timeout: 5_000 });
}

/**
 * Clears everything a capture could leave behind in a kept context: cookies, every kind of origin
 * storage (local/session storage, IndexedDB, Cache Storage, service workers), the HTTP cache,
 * permission overrides, and what lives in the tab itself: its history (history.back() would
 * return to the previous capture's URL) and window.name (it survives navigations). Per-page
 * emulation (viewport, UA, media, geolocation, headers) is set anew by every capture. Returns
 * false when the reset could not be completed: the slot is then dropped.
 */
export async function resetSlot(slot: Slot, keepRenderer = true): Promise<boolean> {
  try {
    await unload(slot.page, keepRenderer);
    // Independent of each other: sent together, so the slot is ready again sooner.
    const origins = [...slot.origins];
    slot.origins.clear();
    await Promise.all([
      slot.page.evaluate(() => {
        window.name = '';
      }),
      slot.session.send('Page.resetNavigationHistory'),
      slot.session.send('Network.clearBrowserCookies'),
      slot.session.send('Network.clearBrowserCache'),
      ...origins.map((origin) => slot.session.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' })),
      slot.context.clearPermissionOverrides(),
    ]);
    return true;
  } catch {
    return false;
  }
}

import type { Browser, BrowserContext, CDPSession, HTTPRequest, Page } from 'puppeteer-core';
import type { BrowserManager } from '../browser/browser-manager.js';
import { REDIRECT_WINDOW_MS, trackNavigationTimers } from './navigation-timers.js';
import { pageEventsSession } from './page-events-session.js';
import { BLANK, park } from './parked-page.js';
import { ThirdPartyStorageKeys } from './third-party-storage.js';
import { ignoreBecause } from '../../ignore-error.js';

/**
 * One pooled browser context and its page: how it is opened, checked and reset between captures
 * of the same organization.
 */

/** A warm incognito context with one open page, ready for the next capture. */
export interface Slot {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** The pool's own DevTools session of the page, for its commands. */
  session: CDPSession;
  /** The session whose Page events the pool listens to (page-events-session.ts). */
  events: CDPSession;
  generation: number;
  uses: number;
  /** Origins of the documents the page loaded, in any frame: their storage is cleared before the slot is reused. */
  origins: Set<string>;
  /** Storage keys of the third-party iframes the page loaded (partitioned storage): cleared with the origins. */
  thirdPartyStorage: ThirdPartyStorageKeys;
  /** Set when anything went wrong: the slot is destroyed instead of reused. */
  doubtful: boolean;
  /** Set by a very large render: the reset gives the context a new renderer process, which returns its large buffers. */
  heavy?: boolean;
  /** One-off contexts (a request with its own proxy) are never pooled. */
  dedicated: boolean;
  /** Set while the slot opens its own new page (renewPage): the popup closer leaves that one alone. */
  renewing?: boolean;
  /** Set while the page holds the previous capture's document, frozen (parked-page.ts). */
  parked?: boolean;
  /** Touch and mobile emulation of the last capture (page-setup.ts touchAndMobile). */
  emulated?: string;
  /** The per-capture settings last applied to the page (page-setup.ts); undefined when not known. */
  applied?: string;
  /** The page's window, which parking minimizes and restores (parked-page.ts). */
  windowId?: number;
  /** The organization whose pages this context's renderer has loaded: it serves no other (docs/security.md). */
  organizationId?: string;
  /** When the pool last took this context back, in releases counted (idle-order.ts): orders the idle list. */
  releasedAt?: number;
}

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
    const slot = {
      browser,
      context,
      generation,
      uses: 0,
      origins: new Set<string>(),
      thirdPartyStorage: new ThirdPartyStorageKeys(),
      doubtful: false,
      dedicated: Boolean(proxyServer),
    } as Slot;
    await openPage(slot);
    // Popups from target=_blank links or scripts are closed the moment they appear.
    context.on('targetcreated', (target) => {
      if (target.type() === 'page' && !slot.renewing)
        void target
          .page()
          .then((popup) => (popup && popup !== slot.page ? popup.close() : undefined))
          .catch(ignoreBecause('a popup may close itself first'));
    });
    return slot;
  } catch (error) {
    await context.close().catch(ignoreBecause('the failed setup is the error thrown'));
    throw error;
  }
}

/** Opens the slot's page in its context, with the guards and listeners every capture relies on. */
async function openPage(slot: Slot): Promise<void> {
  const page = await slot.context.newPage();
  try {
    const session = await page.createCDPSession();
    const { windowId } = await session.send('Browser.getWindowForTarget');
    // Commits are what thaws a parked page (parked-page.ts): this session hears them from the start.
    const events = await pageEventsSession(page, session);
    await page.evaluateOnNewDocument(PAGE_GUARDS);
    // After the guards (which define __name for it): which timers may navigate soon (navigation-timers.ts).
    await page.evaluateOnNewDocument(trackNavigationTimers, REDIRECT_WINDOW_MS);
    // A new document, so that the guards exist before the first capture (html mode writes into it).
    await page.goto(BLANK, { timeout: 5_000 });
    // A beforeunload prompt is accepted: a page never keeps the next capture from replacing it.
    page.on(
      'dialog',
      (dialog) =>
        void (dialog.type() === 'beforeunload' ? dialog.accept() : dialog.dismiss()).catch(
          ignoreBecause('the dialog may be gone with its page'),
        ),
    );
    // A renderer that dies while the slot is idle (out of memory, killed): the next borrower gets a fresh page.
    // (Kept by page rather than on the slot: renewPage gives the slot a new page, which starts clean.)
    page.on('error', () => brokenPages.add(page));
    // Only a document (or a worker, which has its document's origin) can write an origin's storage:
    // the origins of the frames' navigations (every hop of a redirect) are the ones to clear.
    page.on('request', (request: HTTPRequest) => {
      if (!request.isNavigationRequest()) return;
      const origin = originOf(request.url());
      if (origin) slot.origins.add(origin);
    });
    slot.thirdPartyStorage.watch(page, session);
    slot.page = page;
    slot.session = session;
    slot.events = events;
    slot.windowId = windowId;
    // A new page is not parked: it shows about:blank, visible, which the first navigation replaces.
    // puppeteer's emulation starts without touch.
    slot.emulated = 'false/false';
    slot.applied = undefined;
    slot.parked = false;
  } catch (error) {
    await page.close().catch(ignoreBecause('the failed setup is the error thrown'));
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
 * Gives the slot a new page, so a new renderer process, in the same context: a kept renderer
 * grows by about 6 MB a capture. A new page in the context costs far less than a new context
 * (~1.1 CPU-s), and unlike a browser-initiated navigation it gets a new renderer in the headless
 * shell too, which has no back/forward cache to swap the page's browsing instance.
 */
async function renewPage(slot: Slot): Promise<void> {
  // The old page goes first, so that its scripts stop before anything is cleared.
  await slot.page.close();
  slot.renewing = true;
  try {
    await openPage(slot);
  } finally {
    slot.renewing = false;
  }
  // A popup the old page opened just before it closed may have appeared meanwhile.
  await Promise.all((await slot.context.pages()).filter((page) => page !== slot.page).map((page) => page.close()));
}

/**
 * The storage an origin's scripts can write, cleared per origin by the reset: every kind of origin
 * storage Storage.clearDataForOrigin names. Not `all`, which also clears the browser's own records
 * (attribution reporting, private aggregation and the like, which a page can neither read nor, in
 * this browser, write): measured on a real saved page at four clients, `all` cost about 5 ms more
 * of browser CPU a capture than this list. Cookies are cleared for the whole context besides.
 */
const ORIGIN_STORAGE_TYPES = [
  'cookies',
  'local_storage',
  'indexeddb',
  'websql',
  'service_workers',
  'cache_storage',
  'file_systems',
  'shared_storage',
  'storage_buckets',
  'interest_groups',
  'shader_cache',
].join(',');

/** A renderer whose garbage collection takes longer than this is not kept. */
const GARBAGE_COLLECTION_TIMEOUT_MS = 2_000;

/**
 * A full garbage collection in the page's renderer, on its parked (frozen) document: what a kept
 * renderer grows by, about 6 MB a capture, is mostly the previous documents' garbage, which V8
 * collects late. Measured on the bench page over 60 captures, one collection every 10 captures
 * held the renderer at 121–130 MB (without: 160 → 230 MB) for about 17 ms of its CPU each, where
 * a new page and renderer every 10 captures cost about 160 ms of CPU each (about 2 CPU-ms against 16
 * a capture). False when it failed or took too long: the slot is then dropped.
 */
async function collectGarbage(slot: Slot): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), GARBAGE_COLLECTION_TIMEOUT_MS)));
  try {
    const collected = slot.session.send('HeapProfiler.collectGarbage').then(
      () => true,
      () => false,
    );
    return await Promise.race([collected, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Parks the page (parked-page.ts: its document frozen, its loads stopped), or gives the slot a new
 * page, then clears everything a capture could leave behind in a kept context: cookies, every kind of origin
 * storage (local/session storage, IndexedDB, Cache Storage, service workers), the HTTP cache,
 * permission overrides, and what lives in the tab itself: its history (history.back() would
 * return to the previous capture's URL) and window.name (it survives navigations). Per-page
 * emulation (viewport, UA, media, geolocation, headers) is kept, and set again by a capture that
 * asks for other settings (page-setup.ts). `renderer`: keep the page's renderer, keep it after a
 * full garbage collection, or renew it. Returns false when the reset could not be completed: the
 * slot is then dropped.
 */
export async function resetSlot(slot: Slot, renderer: 'keep' | 'collect' | 'renew' = 'keep'): Promise<boolean> {
  try {
    // A page that will not freeze (a script that never yields) is not kept.
    if (renderer === 'renew') await renewPage(slot);
    else if (!(await park(slot))) return false;
    if (renderer === 'collect' && !(await collectGarbage(slot))) return false;
    const origins = [...slot.origins];
    slot.origins.clear();
    const partitioned = await slot.thirdPartyStorage.take(slot.session);
    // Independent of each other: sent together, so the slot is ready again sooner.
    await Promise.all([
      slot.page.evaluate(() => {
        window.name = '';
      }),
      // Again when the next document commits (parked-page.ts thaw); this one also covers a document
      // that commits in a new renderer process and reads its history before that.
      slot.session.send('Page.resetNavigationHistory'),
      slot.session.send('Network.clearBrowserCookies'),
      slot.session.send('Network.clearBrowserCache'),
      ...origins.map((origin) => slot.session.send('Storage.clearDataForOrigin', { origin, storageTypes: ORIGIN_STORAGE_TYPES })),
      ...partitioned.map((storageKey) =>
        slot.session.send('Storage.clearDataForStorageKey', { storageKey, storageTypes: ORIGIN_STORAGE_TYPES }),
      ),
      slot.context.clearPermissionOverrides(),
    ]);
    return true;
  } catch {
    return false;
  }
}

import genericPool, { type Pool } from 'generic-pool';
import type { Browser, BrowserContext, CDPSession, HTTPRequest, Page } from 'puppeteer';
import type { Logger } from 'pino';
import type { BrowserManager } from './browser-manager.js';

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
  /** The pooled slot a dedicated one holds on to, so that it counts against the concurrency limit. */
  borrowed?: Slot;
}

export interface ContextPoolOptions {
  size: number;
  maxQueue: number;
  reuseLimit: number;
  logger: Logger;
}

export class PoolSaturatedError extends Error {}

const BLANK = 'about:blank';

/**
 * Runs in every document before its own scripts: a capture never opens windows. It also defines
 * `__name`, which tsx (esbuild keepNames) wraps around functions we pass to page.evaluate.
 */
const PAGE_GUARDS = `(() => {
  try { Object.defineProperty(window, 'open', { value: () => null, configurable: false, writable: false }); } catch {}
  try { if (!('__name' in globalThis)) Object.defineProperty(globalThis, '__name', { value: (fn) => fn, enumerable: false }); } catch {}
})();`;

async function openSlot(manager: BrowserManager, proxyServer?: string): Promise<Slot> {
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
    page.on('error', () => (slot.doubtful = true));
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

function originOf(url: string): string | undefined {
  if (!url.startsWith('http:') && !url.startsWith('https:')) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Clears everything a capture could leave behind in a kept context: cookies, every kind of origin
 * storage (local/session storage, IndexedDB, Cache Storage, service workers), the HTTP cache,
 * permission overrides, and what lives in the tab itself: its history (history.back() would
 * return to the previous capture's URL) and window.name (it survives navigations). Per-page
 * emulation (viewport, UA, media, geolocation, headers) is set anew by every capture. Returns
 * false when the reset could not be completed: the slot is then dropped.
 */
async function resetSlot(slot: Slot): Promise<boolean> {
  try {
    await slot.page.goto(BLANK, { timeout: 5_000 });
    await slot.page.evaluate(() => {
      window.name = '';
    });
    await slot.session.send('Page.resetNavigationHistory');
    await slot.session.send('Network.clearBrowserCookies');
    await slot.session.send('Network.clearBrowserCache');
    for (const origin of slot.origins) {
      await slot.session.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' });
    }
    slot.origins.clear();
    await slot.context.clearPermissionOverrides();
    return true;
  } catch {
    return false;
  }
}

/**
 * A fixed number of warm contexts (the concurrency limit) with a bounded queue in front of them.
 * Contexts are reused after a full reset (~0.35 CPU-s per capture instead of ~1.1 for a new one)
 * and replaced after `reuseLimit` captures, after any error, or when the browser was relaunched.
 */
export class ContextPool {
  private readonly pool: Pool<Slot>;
  /** Waiting acquisitions whose capture was given up (deadline, client gone): they hold no queue place. */
  private abandoned = 0;

  constructor(
    private readonly manager: BrowserManager,
    private readonly options: ContextPoolOptions,
  ) {
    this.pool = genericPool.createPool<Slot>(
      {
        create: () => openSlot(manager),
        destroy: async (slot) => this.closeSlot(slot),
        validate: async (slot) => slot.generation === manager.generation && slot.browser.connected && !slot.page.isClosed() && !slot.doubtful,
      },
      {
        max: options.size,
        min: options.size,
        // The queue bound is enforced in acquire(), where given-up waiters do not count.
        testOnBorrow: true,
        autostart: false,
      },
    );
    // generic-pool retries failed creations itself; log them rather than crash.
    this.pool.on('factoryCreateError', (error) => options.logger.warn({ err: error }, 'could not open a browser context'));
  }

  /** Opens the warm contexts now, so that the first requests do not pay for them. */
  async warm(): Promise<void> {
    await this.manager.get();
    this.pool.start();
    await this.pool.ready();
  }

  get waiting(): number {
    return Math.max(0, this.pool.pending - this.abandoned);
  }

  get busy(): number {
    return this.pool.borrowed;
  }

  get size(): number {
    return this.options.size;
  }

  /** Captures that may wait for a slot before new ones are refused (MAX_QUEUE). */
  get maxQueue(): number {
    return this.options.maxQueue;
  }

  /** A slot for one capture; rejects with PoolSaturatedError when the queue is full. */
  async acquire(organizationId?: string, proxyServer?: string): Promise<Slot> {
    if (this.waiting >= this.options.maxQueue && this.pool.available === 0) {
      throw new PoolSaturatedError('capture queue is full');
    }
    let pooled = await this.pool.acquire();
    // One organization per renderer: a warm context that served another organization is replaced
    // by a fresh one (separate browser contexts never share a renderer process).
    while (pooled.organizationId !== undefined && pooled.organizationId !== organizationId) {
      await this.pool.destroy(pooled);
      pooled = await this.pool.acquire();
    }
    pooled.organizationId = organizationId;
    if (!proxyServer) return pooled;
    // The pool slot still bounds concurrency; the capture itself runs in a dedicated proxied context.
    try {
      const dedicated = await openSlot(this.manager, proxyServer);
      dedicated.borrowed = pooled;
      return dedicated;
    } catch (error) {
      await this.pool.release(pooled);
      throw error;
    }
  }

  /**
   * Gives up a pending acquire() whose capture will not run: it stops counting as queued, and the
   * slot it is eventually granted goes straight back.
   */
  abandon(acquiring: Promise<Slot>): void {
    this.abandoned += 1;
    acquiring.then(
      (slot) => {
        this.abandoned -= 1;
        return this.release(slot);
      },
      () => {
        this.abandoned -= 1;
      },
    );
  }

  /** Returns a slot: reset and kept, or destroyed when in doubt or worn out. */
  async release(slot: Slot): Promise<void> {
    if (slot.dedicated) {
      await this.closeSlot(slot);
      if (slot.borrowed) await this.pool.release(slot.borrowed);
      return;
    }
    slot.uses += 1;
    const keep = !slot.doubtful && slot.uses < this.options.reuseLimit && slot.generation === this.manager.generation && (await resetSlot(slot));
    if (keep) await this.pool.release(slot);
    else await this.pool.destroy(slot);
  }

  private async closeSlot(slot: Slot): Promise<void> {
    await slot.context.close().catch(() => undefined);
    // A recycled browser closes when its last context is gone.
    if (slot.generation !== this.manager.generation && slot.browser.connected && slot.browser.browserContexts().length <= 1) {
      await slot.browser.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await this.pool.drain().catch(() => undefined);
    await this.pool.clear().catch(() => undefined);
  }
}

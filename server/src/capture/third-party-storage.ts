import type { CDPSession, Frame, Page } from 'puppeteer';

/**
 * The storage keys of the third-party iframes a kept page loaded, for the reset (pool-slot.ts).
 * What an iframe of another site writes (local storage, IndexedDB, Cache Storage…) is partitioned
 * under the top document's site: its storage key is the frame's origin plus that site
 * (`http://127.0.0.2:8000/^0http://127.0.0.1`), and clearing the frame's origin
 * (Storage.clearDataForOrigin) does not reach it: measured, an iframe's local storage survived
 * that clear and was there for the next capture's iframe of the same origin. So each iframe's key
 * is asked of Chromium as the iframe commits, and the reset clears those keys.
 *
 * An iframe that commits and is removed before the answer comes back has no key to ask for: its
 * lookup fails, and what it wrote in those few milliseconds is not found by the reset.
 */
export class ThirdPartyStorageKeys {
  private readonly keys = new Set<string>();
  private readonly lookups = new Set<Promise<void>>();

  /** Asks for the storage key of every iframe the page commits (the page's own frames and out-of-process ones). */
  watch(page: Page, session: CDPSession): void {
    page.on('framenavigated', (frame: Frame) => {
      if (frame === page.mainFrame() || !/^https?:/.test(frame.url())) return;
      // puppeteer's frame id is the DevTools frame id; it has no public accessor.
      const frameId = (frame as unknown as { _id?: unknown })._id;
      if (typeof frameId !== 'string') return;
      const lookup = session
        .send('Storage.getStorageKeyForFrame', { frameId })
        .then(({ storageKey }) => {
          // A first-party key is the origin's own, which the reset clears by origin.
          if (storageKey.includes('^')) this.keys.add(storageKey);
        })
        .catch(() => undefined)
        .finally(() => this.lookups.delete(lookup));
      this.lookups.add(lookup);
    });
  }

  /** The keys found since the last call, once the lookups under way have answered. */
  async take(): Promise<string[]> {
    await Promise.all([...this.lookups]);
    const keys = [...this.keys];
    this.keys.clear();
    return keys;
  }
}

import type { CDPSession, Frame, Page } from 'puppeteer-core';

/**
 * The storage keys of the third-party iframes a kept page loaded, for the reset (pool-slot.ts).
 * What an iframe of another site writes (local storage, IndexedDB, Cache Storage…) is partitioned
 * under the top document's site: its storage key is the frame's origin plus that site
 * (`http://127.0.0.2:8000/^0http://127.0.0.1`), and clearing the frame's origin
 * (Storage.clearDataForOrigin) does not reach it: measured, an iframe's local storage survived
 * that clear and was there for the next capture's iframe of the same origin. So the reset asks
 * Chromium for the key of every iframe that committed a document, and clears those keys.
 *
 * When it is asked matters. Right as puppeteer reports an out-of-process iframe's commit, Chromium
 * may still answer with the key of the frame's previous document (measured: the parent's own key,
 * about one time in eight on a loaded machine), so every iframe is asked again by the reset, when
 * the frozen page's frames have long settled. The answer at commit stays the fallback for an
 * iframe that is gone by then; one removed within milliseconds of its commit, before either
 * answer, is the case this misses.
 */
export class ThirdPartyStorageKeys {
  private readonly keys = new Set<string>();
  /** Frames (DevTools frame ids) that committed a document since the last reset. */
  private readonly frames = new Set<string>();
  private readonly lookups = new Set<Promise<void>>();

  /** Follows the iframes the page commits (its own frames and out-of-process ones). */
  watch(page: Page, session: CDPSession): void {
    page.on('framenavigated', (frame: Frame) => {
      if (frame === page.mainFrame() || !/^https?:/.test(frame.url())) return;
      // puppeteer's frame id is the DevTools frame id; it has no public accessor.
      const frameId = (frame as unknown as { _id?: unknown })._id;
      if (typeof frameId !== 'string') return;
      this.frames.add(frameId);
      const lookup = this.lookUp(session, frameId).finally(() => this.lookups.delete(lookup));
      this.lookups.add(lookup);
    });
  }

  /** The keys of the iframes committed since the last call, each asked again now (see the class comment). */
  async take(session: CDPSession): Promise<string[]> {
    const frames = [...this.frames];
    this.frames.clear();
    await Promise.all([...this.lookups, ...frames.map((frameId) => this.lookUp(session, frameId))]);
    const keys = [...this.keys];
    this.keys.clear();
    return keys;
  }

  /** Records the frame's key when it is a partitioned one (a first-party key is its origin's, which the reset clears by origin). */
  private async lookUp(session: CDPSession, frameId: string): Promise<void> {
    try {
      const { storageKey } = await session.send('Storage.getStorageKeyForFrame', { frameId });
      if (storageKey.includes('^')) this.keys.add(storageKey);
    } catch {
      // The frame is gone (or the page is): the answer at its commit, if any, stands.
    }
  }
}

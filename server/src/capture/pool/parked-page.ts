import type { CDPSession, Page } from 'puppeteer-core';

/**
 * Parking: how a kept page ends one capture and starts the next without an about:blank document
 * in between. Unloading to about:blank after every capture cost about 37 ms of CPU a capture
 * (renderer, browser and puppeteer's lifecycle events for a document nobody looks at); at four
 * clients on two cores, CPU is throughput.
 *
 * After a capture the page is frozen (Page.setWebLifecycleState): its timers, tasks, event
 * handlers and dedicated workers stop at once, so nothing of it runs after the reset's clears. Its
 * loads are then stopped: a response still on its way could otherwise set a cookie after the
 * clears. The next capture's navigation replaces the frozen document; the page is thawed the
 * moment the new document commits, which is also when the frozen one is gone. A kept puppeteer
 * page unloads the previous document on that same navigation, so this costs what the floor pays.
 *
 * Where the navigation would not replace the frozen document, it is replaced with about:blank
 * first, still frozen (leave): a target that differs from the frozen page's address only by its
 * #fragment (a same-document navigation), and a change between touch and mobile emulation
 * (puppeteer then reloads the page it has). A navigation that ends without a new document (204, a
 * download) leaves the frozen one in place: it is replaced the same way before anything is
 * captured (afterNavigation). The pool does the same to idle parked pages once nothing renders
 * (idle-parked-pages.ts).
 *
 * A document that commits in a new renderer process may read document.visibilityState as hidden
 * in its first script: the page is shown right after the commit.
 */

/** What parking needs of a pool slot (pool-slot.ts Slot), without importing it (it parks its pages). */
export interface ParkableSlot {
  page: Page;
  session: CDPSession;
  /** Where the page's commits are heard (page-events-session.ts). */
  events: CDPSession;
  /** The page's window (Browser.getWindowForTarget): a frozen page is hidden, and shown again with its window. */
  windowId?: number;
  /** Set while the page holds the previous capture's document, frozen. */
  parked?: boolean;
  /** Touch and mobile emulation of the last capture (page-setup.ts touchAndMobile). */
  emulated?: string;
  doubtful: boolean;
}

export const BLANK = 'about:blank';

/** A page that does not freeze this quickly (a script that never yields) is not kept (pool-slot.ts resetSlot). */
const FREEZE_TIMEOUT_MS = 1_000;
/** Thawing the new document is retried while the browser switches the tab to it ("Not attached to an active page"). */
const THAW_RETRY_MS = 2;
const THAW_ATTEMPTS = 1_000;

/** Freezes the page's document, stops its loads and minimizes its window. False when it could not be parked. */
export async function park(slot: ParkableSlot): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the page did not freeze')), FREEZE_TIMEOUT_MS);
  });
  try {
    // Frozen first: stopping the loads fires their abort handlers, which then never run.
    await Promise.race([slot.session.send('Page.setWebLifecycleState', { state: 'frozen' }), timeout]);
    slot.parked = true;
    // Freezing hides the page, and setting it active again does not show it: a hidden page gets no
    // animation frames, so lazy images, scroll handlers and actions would stall. Its window is
    // minimized here and restored on thawing, which shows the page before its new document runs.
    await Promise.race([
      Promise.all([
        slot.session.send('Page.stopLoading'),
        slot.session.send('Browser.setWindowBounds', { windowId: slot.windowId!, bounds: { windowState: 'minimized' } }),
      ]),
      timeout,
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** What the next capture's navigation does to a parked page (see the module's comment). */
export interface Departure {
  /** After the navigation returned: unloads a parked document the navigation did not replace. */
  afterNavigation(): Promise<void>;
  /** Stops listening (the capture is over, whatever happened). */
  stop(): void;
}

const NOTHING: Departure = { afterNavigation: async () => undefined, stop: () => undefined };

function withoutFragment(url: string): string {
  const hash = url.indexOf('#');
  return hash === -1 ? url : url.slice(0, hash);
}

/**
 * Thaws the page the moment a new document commits in its main frame (the frozen one is gone
 * then), and gives the tab a history of that document alone, so that history.back() cannot return
 * to the previous capture's address. Returns the function that stops listening.
 */
function thawOnCommit(slot: ParkableSlot): () => void {
  const onCommit = (event: { frame: { parentId?: string } }) => {
    if (event.frame.parentId !== undefined || !slot.parked) return;
    thaw(slot).catch(() => (slot.doubtful = true));
  };
  const events = slot.events;
  events.on('Page.frameNavigated', onCommit);
  return () => events.off('Page.frameNavigated', onCommit);
}

/**
 * Replaces a parked document with about:blank while it is still frozen: thawing it first would let
 * its timers run after the reset's clears, until about:blank commits.
 */
export async function leave(slot: ParkableSlot): Promise<void> {
  const stop = thawOnCommit(slot);
  try {
    await slot.page.goto(BLANK, { timeout: 5_000 });
  } finally {
    stop();
  }
  if (slot.parked) throw new Error('the parked page did not leave');
}

/**
 * Readies a parked page for the capture's navigation: thaws it when the new document commits, or
 * replaces it with about:blank now where the navigation would not replace it. `target`: the
 * capture's url (none for inline html) and its touch and mobile emulation (page-setup.ts touchAndMobile).
 */
export async function depart(slot: ParkableSlot, target: { url?: string; emulated: string }): Promise<Departure> {
  if (!slot.parked) return NOTHING;
  // Only an address with a #fragment can be a same-document navigation; the same address without
  // one loads a new document.
  const sameDocument =
    target.url !== undefined && target.url.includes('#') && withoutFragment(target.url) === withoutFragment(slot.page.url());
  if (sameDocument || slot.emulated !== target.emulated) {
    await leave(slot);
    return NOTHING;
  }
  const stop = thawOnCommit(slot);
  return {
    stop,
    async afterNavigation() {
      stop();
      if (slot.parked) await leave(slot);
    },
  };
}

/**
 * Sets the page active and shown again, with a history of its new document alone. Right after a
 * commit the browser may still be switching the tab to the new document and refuses the calls for
 * a few milliseconds: they are sent again until they land.
 */
async function thaw(slot: ParkableSlot): Promise<void> {
  slot.parked = false;
  for (let attempt = 0; ; attempt++) {
    try {
      // Sent together (one round trip while the new document waits): the browser handles a
      // session's commands in order, so the history is reset before the document runs.
      await Promise.all([
        slot.session.send('Page.resetNavigationHistory'),
        slot.session.send('Browser.setWindowBounds', { windowId: slot.windowId!, bounds: { windowState: 'normal' } }),
        slot.session.send('Page.setWebLifecycleState', { state: 'active' }),
      ]);
      return;
    } catch (error) {
      if (attempt >= THAW_ATTEMPTS || !slot.session.connection()) throw error;
      await new Promise((resolve) => setTimeout(resolve, THAW_RETRY_MS));
    }
  }
}

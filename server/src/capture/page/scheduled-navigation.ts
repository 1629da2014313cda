import type { Page } from 'puppeteer-core';
import { afterOneTurn, REDIRECT_WINDOW_MS } from '../pool/navigation-timers.js';
import { isContextLost, type NavigationWatch } from '../pool/navigation-watch.js';
import { ignoreBecause } from '../../ignore-error.js';

/** Longest wait between two looks while a scheduled navigation is due (it wakes the wait itself when it starts). */
const POLL_MS = 100;
/** How late a due refresh may start on a busy renderer before it is no longer waited for. */
const REFRESH_LATENESS_MS = 1_000;

const withoutFragment = (url: string) => url.split('#')[0];

/**
 * How long until the current document's refresh starts, when it is one to follow: within `horizonMs`
 * and to an address the chain has not been to (a page that refreshes itself, or two that refresh
 * to each other, are captured as they are, never reloaded in a loop).
 */
function refreshDueIn(page: Page, watch: NavigationWatch, horizonMs: number): number | undefined {
  const refresh = watch.refresh;
  if (!refresh) return undefined;
  const target = withoutFragment(refresh.url);
  const visited = [page.url(), ...watch.documents.map((document) => document.response.url())];
  if (visited.some((url) => withoutFragment(url) === target)) return undefined;
  const dueIn = refresh.dueAt - Date.now();
  if (dueIn > horizonMs || dueIn < -REFRESH_LATENESS_MS) return undefined;
  return Math.max(0, dueIn);
}

/**
 * After a document has loaded: waits while it has a navigation scheduled within the redirect window
 * (a meta refresh or Refresh header to another address, or a script timer that sets the location or
 * submits a form), at most until `until`. Returns whether a navigation began. A page with nothing
 * scheduled costs one look (the page's due timers run once), no wait.
 */
export async function awaitScheduledNavigation(page: Page, watch: NavigationWatch, until: number): Promise<boolean> {
  const windowEnd = Math.min(until, Date.now() + REDIRECT_WINDOW_MS);
  // Several events can arrive before this wakes: a short navigation may have committed by then.
  const commits = watch.commits;
  const began = () => watch.pending || watch.commits !== commits;
  for (;;) {
    const horizon = windowEnd - Date.now();
    const timerIn = await afterOneTurn(page, horizon);
    if (began()) return true;
    const refreshIn = refreshDueIn(page, watch, horizon);
    const dueIn = Math.min(timerIn ?? Number.POSITIVE_INFINITY, refreshIn ?? Number.POSITIVE_INFINITY);
    // A timer that ran late on a busy renderer is still waited for, up to `until`.
    if (dueIn === Number.POSITIVE_INFINITY || Date.now() >= until) return false;
    await watch.next(Math.max(1, Math.min(dueIn, POLL_MS, until - Date.now())));
    if (began()) return true;
  }
}

/** Cancels the navigations a document starts by itself (the Navigation API's navigate event); same-document ones go on. */
function holdNavigations(): void {
  const navigation = (window as unknown as { navigation?: EventTarget }).navigation;
  navigation?.addEventListener('navigate', (event) => {
    const navigate = event as Event & { destination?: { sameDocument?: boolean } };
    if (navigate.cancelable && !navigate.destination?.sameDocument) navigate.preventDefault();
  });
}

/** Per capture: the script that holds the next documents, and the document (commit count) last held. */
const holding = new WeakMap<NavigationWatch, { added: Promise<unknown>; held: number }>();

/**
 * The documents that come after this one no longer navigate by themselves, from their first script
 * on: set one document before the bound, so that a page reloading itself at once stops there and
 * not some reloads later. Only for the rest of this capture: the watch's end removes it.
 */
export async function holdNextDocuments(page: Page, watch: NavigationWatch): Promise<void> {
  let hold = holding.get(watch);
  if (!hold) {
    const added = page.evaluateOnNewDocument(holdNavigations);
    hold = { added, held: -1 };
    holding.set(watch, hold);
    watch.whenStopped(() => {
      void added
        .then(({ identifier }) => page.removeScriptToEvaluateOnNewDocument(identifier))
        .catch(ignoreBecause('a page closed meanwhile took its script with it'));
    });
  }
  await hold.added;
}

/** Ends a chain that reached the bound: the current document, and the ones still on their way, stay where they are. */
export async function endChain(page: Page, watch: NavigationWatch): Promise<void> {
  await holdNextDocuments(page, watch);
  const hold = holding.get(watch)!;
  if (hold.held === watch.commits) return;
  hold.held = watch.commits;
  await page.evaluate(holdNavigations).catch((error: unknown) => {
    if (!isContextLost(error)) throw error;
  });
}

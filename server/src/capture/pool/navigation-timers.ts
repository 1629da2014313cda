import type { Page } from 'puppeteer-core';
import { isContextLost } from './navigation-watch.js';

/**
 * How far ahead a capture looks for a navigation the page has scheduled: a script timer that looks
 * like one, a meta refresh or an HTTP Refresh header (docs/capture-fidelity.md, "Redirect chains").
 */
export const REDIRECT_WINDOW_MS = 5_000;

/** The main window's property (a registered symbol, not enumerable) through which a capture reads the timers. */
const READER = 'daguerre.navigationTimers';

type TimerCallback = ((...args: unknown[]) => unknown) | string;
interface PendingTimer {
  callback: TimerCallback;
  due: number;
  /** An interval's period (0 for a timeout): its next tick is the one that counts. */
  period: number;
}

/**
 * Runs in every document before its own scripts (pool-slot.ts), in the main frame only: keeps the
 * timeouts and intervals of at most `windowMs` that are pending, so that a capture can tell whether
 * one that sets the location or submits a form is due soon, and wait for that one only. A timer's
 * callback is only kept and read (its source text) when a capture asks; the page's timers run as
 * before. A page can see that setTimeout is wrapped, as it can see that window.open is.
 */
export function trackNavigationTimers(windowMs: number): void {
  if (window !== window.top) return;
  const key = Symbol.for('daguerre.navigationTimers');
  if (key in window) return;
  const pending = new Map<number, PendingTimer>();
  const looksLikeNavigation = new WeakMap<object, boolean>();
  // location = …, location.href = …, location['href'] = …, location.replace(…) / assign(…), form.submit() / requestSubmit(…).
  const NAVIGATES =
    /\blocation\s*(?:\.\s*href\s*|\[\s*["']href["']\s*\]\s*)?=(?!=)|\blocation\s*\.\s*(?:replace|assign)\s*\(|\.\s*(?:submit|requestSubmit)\s*\(/;
  const navigates = (callback: TimerCallback) => {
    if (typeof callback === 'string') return NAVIGATES.test(callback);
    let known = looksLikeNavigation.get(callback);
    if (known === undefined) {
      try {
        known = NAVIGATES.test(Function.prototype.toString.call(callback));
      } catch {
        known = false;
      }
      looksLikeNavigation.set(callback, known);
    }
    return known;
  };
  const track = (native: typeof setTimeout, repeats: boolean) =>
    new Proxy(native, {
      apply(target, self, args: unknown[]) {
        const delay = Number(args[1]) || 0;
        const callback = args[0];
        const kept = typeof callback === 'function' || (typeof callback === 'string' && navigates(callback));
        if (delay <= 0 || delay > windowMs || !kept) return Reflect.apply(target, self, args);
        let id = 0;
        // A timeout's own callback says when it ran (and a navigation it asks for is known by then).
        if (typeof callback === 'function' && !repeats) {
          args[0] = function (this: unknown, ...callArgs: unknown[]) {
            pending.delete(id);
            return Reflect.apply(callback, this, callArgs);
          };
        }
        id = Reflect.apply(target, self, args) as number;
        pending.set(id, { callback: callback as TimerCallback, due: performance.now() + delay, period: repeats ? delay : 0 });
        return id;
      },
    });
  const forget = (native: typeof clearTimeout) =>
    new Proxy(native, {
      apply(target, self, args: unknown[]) {
        pending.delete(Number(args[0]));
        return Reflect.apply(target, self, args);
      },
    });
  // Kept before the page's scripts run: the capture's own turn must not depend on a setTimeout the page replaced.
  const nativeSetTimeout = window.setTimeout.bind(window);
  window.setTimeout = track(window.setTimeout, false);
  window.setInterval = track(window.setInterval as typeof setTimeout, true) as typeof setInterval;
  window.clearTimeout = forget(window.clearTimeout);
  window.clearInterval = forget(window.clearInterval);
  /** Milliseconds until the first timer that looks like a navigation, among those due within `horizonMs`; null when none. */
  const next = (horizonMs: number): number | null => {
    const now = performance.now();
    let first: number | null = null;
    for (const [id, timer] of pending) {
      let due = timer.due;
      if (timer.period > 0 && due < now) due += Math.ceil((now - due) / timer.period) * timer.period;
      // A string callback cannot say that it ran: once due, it has (or is about to).
      if (timer.period === 0 && typeof timer.callback === 'string' && due <= now) {
        pending.delete(id);
        continue;
      }
      const dueIn = Math.max(0, due - now);
      if (dueIn > horizonMs || !navigates(timer.callback)) continue;
      if (first === null || dueIn < first) first = dueIn;
    }
    return first;
  };
  /** After the page's due timers have run once: `next(horizonMs)`. */
  const afterTurn = (horizonMs: number) => new Promise<number | null>((done) => nativeSetTimeout(() => done(next(horizonMs)), 0));
  Object.defineProperty(window, key, { value: afterTurn, enumerable: false });
}

/**
 * Lets the page run its due timers once (a zero-delay timer or meta refresh set at load asks for its
 * navigation then), and answers how long until the first timer that looks like a navigation,
 * within `horizonMs`: null when there is none, or when the document went away meanwhile (its
 * navigation is then under way).
 */
export async function afterOneTurn(page: Page, horizonMs: number): Promise<number | null> {
  return page
    .evaluate(
      (reader, horizon) => {
        const afterTurn = (window as unknown as Record<symbol, ((ms: number) => Promise<number | null>) | undefined>)[Symbol.for(reader)];
        return typeof afterTurn === 'function' ? afterTurn(horizon) : new Promise<null>((done) => setTimeout(() => done(null), 0));
      },
      READER,
      Math.max(0, horizonMs),
    )
    .catch((error: unknown) => {
      if (!isContextLost(error)) throw error;
      return null;
    });
}

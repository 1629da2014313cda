import type { CDPSession, HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';
import { CaptureError } from '../capture-error.js';
import { ignoreBecause } from '../../ignore-error.js';

/**
 * Ends a page whose renderer stopped answering (docs/render-slots.md): a `while (true) {}` or any
 * script that never yields holds a render slot until the capture deadline (30 s by default) and
 * makes every other organization wait that long. A page's main thread answers a trivial protocol
 * call within milliseconds even when it is loading or waiting for the network; one that does not
 * answer for `timeoutMs` is running a script that will not yield. The watchdog then crashes that
 * renderer (CDP Page.crash is handled on the renderer's IO thread, so it works while the main
 * thread spins) and the capture fails at once with 504 PAGE_UNRESPONSIVE, instead of at its
 * deadline.
 *
 * Its own module, beside the memory watchdog (docs/containment.md) that also ends renderers: each
 * watches one thing and says what it saw.
 */

/** Why the watchdog ended the page; the stage guard turns it into the client's 504. */
export class PageUnresponsiveError extends Error {
  constructor(readonly silentMs: number) {
    super(`the page's main thread did not answer for ${silentMs} ms`);
  }
}

/** The client's answer: which stage was running when the page stopped answering, and for how long it was silent. */
export const pageUnresponsive = (stage: string, silentMs: number) =>
  new CaptureError(
    'page-unresponsive',
    `The page stopped responding while ${stage}: its main thread did not answer for ${silentMs} ms (a script that never yields), so its renderer was ended; nothing was charged`,
  );

export interface WatchdogOptions {
  /** Silence after which the page counts as hung (PAGE_UNRESPONSIVE_TIMEOUT_MS). */
  timeoutMs: number;
  /** Pause between an answer and the next ping. */
  intervalMs?: number;
}

export interface Watchdog {
  /** Rejects with PageUnresponsiveError once the page is found hung (and is being ended). */
  unresponsive: Promise<never>;
  stop(): void;
}

/** The smallest call that needs the page's main thread: an evaluation in its main frame. */
const PING = { expression: '0', returnByValue: true } as const;

/**
 * While the main frame's navigation waits for its response, Chromium holds the protocol calls to
 * the page until the new document commits: silence then says nothing about the page (measured: a
 * server that answers after 4 s looked hung). The watchdog counts silence only from the response on.
 */
function trackNavigation(page: Page): { quietSince(): number | undefined; stop(): void } {
  const pending = new Set<HTTPRequest>();
  let lastEvent = 0;
  const isMainNavigation = (request: HTTPRequest) => request.isNavigationRequest() && request.frame() === page.mainFrame();
  const onRequest = (request: HTTPRequest) => {
    if (!isMainNavigation(request)) return;
    pending.add(request);
    lastEvent = Date.now();
  };
  const onSettled = (request: HTTPRequest) => {
    if (!pending.delete(request)) return;
    lastEvent = Date.now();
  };
  const onResponse = (response: HTTPResponse) => onSettled(response.request());
  page.on('request', onRequest);
  page.on('response', onResponse);
  page.on('requestfailed', onSettled);
  return {
    // A redirect is a new request for the same navigation: the old one never settles, so any pending one counts.
    quietSince: () => (pending.size > 0 ? undefined : lastEvent),
    stop: () => {
      page.off('request', onRequest);
      page.off('response', onResponse);
      page.off('requestfailed', onSettled);
    },
  };
}

/**
 * Pings the page's main thread over `session` until stopped. Any answer counts, an error
 * included (a document being replaced answers "no context"): only silence means a hung thread.
 */
export function watchResponsiveness(page: Page, session: CDPSession, options: WatchdogOptions): Watchdog {
  const intervalMs = options.intervalMs ?? Math.min(500, options.timeoutMs / 4);
  const navigation = trackNavigation(page);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let hung: (error: PageUnresponsiveError) => void = () => undefined;
  const unresponsive = new Promise<never>((_, reject) => (hung = reject));
  unresponsive.catch(ignoreBecause('raced by the capture; a hang after it ended is of no interest'));
  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    navigation.stop();
  };

  const ping = () => {
    if (stopped) return;
    const sent = Date.now();
    let answered = false;
    const check = () => {
      if (stopped || answered) return;
      const quietSince = navigation.quietSince();
      const silentFrom = Math.max(sent, quietSince ?? Date.now());
      const silentMs = Date.now() - silentFrom;
      if (quietSince === undefined || silentMs < options.timeoutMs) {
        timer = setTimeout(check, options.timeoutMs - silentMs);
        return;
      }
      stop();
      // Rejected first, so the capture reports the hang rather than the crash that follows.
      hung(new PageUnresponsiveError(silentMs));
      // No answer comes back from a crashed renderer: the call is not awaited.
      session.send('Page.crash').catch(ignoreBecause('a crashed renderer never answers'));
    };
    timer = setTimeout(check, options.timeoutMs);
    session
      .send('Runtime.evaluate', PING)
      .then(() => undefined, ignoreBecause('an error is an answer too: the renderer is alive'))
      .finally(() => {
        answered = true;
        if (stopped) return;
        clearTimeout(timer);
        timer = setTimeout(ping, intervalMs);
      });
  };
  ping();
  return { unresponsive, stop };
}

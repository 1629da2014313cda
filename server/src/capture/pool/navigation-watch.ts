import type { CDPSession, Frame, HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';

/** How long a navigation a script asked for may take to send its request before it no longer counts. */
const ASKED_EXPIRY_MS = 1_000;

/** The main frame's failed navigation: the address and Chromium's network error (net::ERR_…). */
export interface FailedNavigation {
  url: string;
  errorText: string;
}

/** A document the main frame loaded, and why the browser left it (Chromium's ClientNavigationReason; none for a browser-initiated one). */
export interface LoadedDocument {
  response: HTTPResponse;
  leftBecause?: string;
}

/** A meta refresh or HTTP Refresh header of the current document: where to and when (epoch ms). */
export interface ScheduledRefresh {
  url: string;
  dueAt: number;
}

/** Navigations Chromium schedules with a delay of their own (the others are asked for at once). */
const REFRESHES = new Set(['metaTagRefresh', 'httpHeaderRefresh']);

/**
 * Follows the main frame of one capture's page: every navigation it starts (a redirect hop, a
 * script's location change after load, a meta refresh), the response of the last document it
 * navigated to, and the last navigation that failed; the documents it went through and the refresh
 * the current one has scheduled. The renderer reads it to capture the page the browser ends on,
 * not the first one it was sent to (docs/capture-fidelity.md).
 */
export class NavigationWatch {
  /** The main document's response of the last navigation (null before one arrived, and for data: documents). */
  response: HTTPResponse | null = null;
  /** The address the main frame last asked for (each redirect hop is a new request). */
  requestedUrl: string | undefined;
  failure: FailedNavigation | undefined;
  /** New documents committed in the main frame (same-document navigations do not count). */
  commits = 0;
  /** The documents the main frame received, in order (redirect-chain.ts reads the hops from them). */
  readonly documents: LoadedDocument[] = [];
  /** The current document's refresh, while it is scheduled. */
  refresh: ScheduledRefresh | undefined;
  /** Why the last navigation a page asked for was asked for (Page.frameRequestedNavigation's reason). */
  private reason: string | undefined;
  private asked = false;
  private askedAt = 0;
  private started = false;
  private readonly waiters = new Set<() => void>();
  private readonly stops: Array<() => void> = [];

  /**
   * Starts watching. The session's Page events (commits, requested navigations) need its Page
   * domain, which the session the pool listens on has on from its page's start
   * (page-events-session.ts): not asked again, a DevTools round trip a capture.
   */
  constructor(
    private readonly page: Page,
    session?: CDPSession,
  ) {
    const main = (frame: Frame | null) => frame === page.mainFrame();
    const isMainId = (frameId: string) => frameId === (page.mainFrame() as unknown as { _id: string })._id;
    const onRequest = (request: HTTPRequest) => {
      if (!request.isNavigationRequest() || !main(request.frame())) return;
      // The next hop of an HTTP redirect: the answer that redirected is no document. Otherwise a new
      // navigation, and the document it leaves is left for the reason the page gave.
      const redirected = request.redirectChain().at(-1)?.response();
      if (redirected) {
        if (this.documents.at(-1)?.response === redirected) this.documents.pop();
      } else {
        const leaving = this.documents.at(-1);
        if (leaving) leaving.leftBecause = this.reason;
        this.reason = undefined;
      }
      this.requestedUrl = request.url();
      this.asked = true;
      this.started = true;
      this.failure = undefined;
      this.wake();
    };
    const onResponse = (response: HTTPResponse) => {
      const request = response.request();
      if (!request.isNavigationRequest() || !main(request.frame())) return;
      // 204 and 205 end a navigation without a new document: the page stays as it was.
      if (response.status() === 204 || response.status() === 205) this.settled();
      else {
        this.response = response;
        this.documents.push({ response });
      }
    };
    const onFailed = (request: HTTPRequest) => {
      if (!request.isNavigationRequest() || !main(request.frame())) return;
      this.failure = { url: request.url(), errorText: request.failure()?.errorText ?? 'net::ERR_FAILED' };
      this.settled();
    };
    const onNavigated = (frame: Frame) => {
      if (main(frame)) this.settled();
    };
    // A new document (not a pushState or #hash change): its execution context is a new one.
    const onCommit = (event: { frame: { id: string; parentId?: string } }) => {
      if (event.frame.parentId !== undefined) return;
      this.commits += 1;
      this.refresh = undefined;
      this.settled();
    };
    // Sent by the renderer while the script that asked for the navigation runs: known before the
    // load event that ends page.goto, while the request itself may not have started yet.
    const onRequested = (event: { frameId: string; reason: string }) => {
      if (!isMainId(event.frameId)) return;
      this.reason = event.reason;
      this.asked = true;
      this.askedAt = Date.now();
      this.started = false;
      this.wake();
    };
    // A refresh is scheduled once its document has loaded (Page.frameScheduledNavigation, deprecated
    // in the protocol but sent by Chromium), with its delay: navigation.ts waits for a short one.
    const onScheduled = (event: { frameId: string; delay: number; reason: string; url: string }) => {
      if (!isMainId(event.frameId) || !REFRESHES.has(event.reason)) return;
      this.refresh = { url: event.url, dueAt: Date.now() + event.delay * 1_000 };
    };
    const onCleared = (event: { frameId: string }) => {
      if (isMainId(event.frameId)) this.refresh = undefined;
    };
    page.on('request', onRequest);
    page.on('response', onResponse);
    page.on('requestfailed', onFailed);
    page.on('framenavigated', onNavigated);
    session?.on('Page.frameNavigated', onCommit);
    session?.on('Page.frameRequestedNavigation', onRequested);
    session?.on('Page.frameScheduledNavigation', onScheduled);
    session?.on('Page.frameClearedScheduledNavigation', onCleared);
    this.stops.push(() => {
      page.off('request', onRequest);
      page.off('response', onResponse);
      page.off('requestfailed', onFailed);
      page.off('framenavigated', onNavigated);
      session?.off('Page.frameNavigated', onCommit);
      session?.off('Page.frameRequestedNavigation', onRequested);
      session?.off('Page.frameScheduledNavigation', onScheduled);
      session?.off('Page.frameClearedScheduledNavigation', onCleared);
    });
  }

  /**
   * A navigation was asked for (by a script or a request) and has not committed, failed or ended
   * without a document yet. One asked for whose request never starts (cancelled by the page, a
   * javascript: URL) stops counting after ASKED_EXPIRY_MS.
   */
  get pending(): boolean {
    return this.asked && (this.started || Date.now() - this.askedAt < ASKED_EXPIRY_MS);
  }

  private settled(): void {
    this.asked = false;
    this.started = false;
    this.wake();
  }

  /** Resolves on the next navigation event of the main frame, or after `ms`. */
  next(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  /** Navigations followed after the first document (a redirect while it parsed included). */
  get followed(): number {
    return Math.max(0, this.commits - 1);
  }

  /** Runs `undo` when the watch stops (the end of the capture, however it ends). */
  whenStopped(undo: () => void): void {
    this.stops.push(undo);
  }

  /** Whether the browser shows its own error page (chrome-error://) in place of a document. */
  onErrorPage(): boolean {
    return this.page.url().startsWith('chrome-error://');
  }

  stop(): void {
    for (const stop of this.stops.splice(0)) stop();
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** Errors of a step that ran while its document was replaced by another one. */
const CONTEXT_LOST =
  /Execution context was destroyed|Cannot find context with specified id|Execution context is not available|frame got detached|Navigating frame was detached|Inspected target navigated|Cannot find default execution context/i;

export function isContextLost(error: unknown): boolean {
  return error instanceof Error && CONTEXT_LOST.test(error.message);
}

import { requestedWaitMs, type CaptureOptions } from '@daguerre/contract';
import type { HTTPResponse, Page } from 'puppeteer-core';
import { isContextLost, type NavigationWatch } from '../pool/navigation-watch.js';
import { redirectChain, type RedirectHop } from './redirect-chain.js';
import { awaitScheduledNavigation, endChain, holdNextDocuments } from './scheduled-navigation.js';
import { guard, type GuardedRequest } from './stage-guard.js';
import { CaptureError, CaptureTimeoutError } from '../capture-error.js';

/** Where the browser ended up: the main document's response, the hops before it, and whether its wait condition timed out. */
export interface Landing {
  response: HTTPResponse | null;
  /** Every address before the final document and how the browser went on from it (redirect-chain.ts). */
  redirects: RedirectHop[];
  /** The wait condition (waitUntil) was not met within its budget; the page is captured as it is. */
  waitTimedOut: boolean;
}

/** The landing on the watch's current document. */
export const landingOf = (watch: NavigationWatch, waitTimedOut: boolean): Landing => ({
  response: watch.response,
  redirects: redirectChain(watch.documents, watch.response),
  waitTimedOut,
});

/**
 * Most navigations after the first document that are followed (script redirects, refreshes,
 * consent walls, routers), like a browser's bound on HTTP redirects; past it the page stays where it is.
 */
export const MAX_FOLLOWED = 10;

/**
 * Whether the chain is at its bound, which it then ends (scheduled-navigation.ts): the documents
 * after the last one to follow are held from their start, so that a page navigating again at once
 * stops at the bound rather than some navigations later.
 */
async function atBound(page: Page, watch: NavigationWatch): Promise<boolean> {
  if (watch.followed >= MAX_FOLLOWED - 1) await holdNextDocuments(page, watch);
  if (watch.followed < MAX_FOLLOWED) return false;
  await endChain(page, watch);
  return true;
}
/** Time kept after a timed-out wait to look at the page, capture and answer. */
const MIN_CAPTURE_RESERVE_MS = 1_500;
const MAX_CAPTURE_RESERVE_MS = 5_000;
const POLL_MS = 100;
/** A document still arriving is given until this long before the deadline to render. */
const LAST_LOOK_MS = 500;

/**
 * How long the wait condition may take before the page is captured as it is (best attempt): the
 * time left, less what the request's own waits need afterwards (delay, the full-page scroll) and a
 * reserve to capture (a fifth of what is left, 1.5 to 5 s). With failOnWaitTimeout, all of it.
 */
export function waitBudgetMs(request: GuardedRequest, options: CaptureOptions): number {
  const left = request.deadline - Date.now();
  if (options.failOnWaitTimeout) return Math.max(1, left - 500);
  const reserve = Math.min(MAX_CAPTURE_RESERVE_MS, Math.max(MIN_CAPTURE_RESERVE_MS, left / 5));
  return Math.max(1, left - reserve - requestedWaitMs(options));
}

const isTimeout = (error: unknown) => error instanceof Error && error.name === 'TimeoutError';

/** The document's readyState, or undefined while there is none to ask (between two documents). */
async function readyState(page: Page): Promise<DocumentReadyState | undefined> {
  return page
    .evaluate(() => document.readyState)
    .catch((error: unknown) => {
      if (isContextLost(error)) return undefined;
      throw error;
    });
}

/** Whether `state` meets waitUntil's event for the document (network idle is waited for separately). */
const reached = (state: DocumentReadyState | undefined, waitUntil: CaptureOptions['waitUntil']) =>
  state !== undefined && state !== 'loading' && (waitUntil === 'domcontentloaded' || state === 'complete');

/**
 * Waits until the current document (after any navigation under way) meets waitUntil, or `until`
 * passes. Polls readyState: the document may be replaced meanwhile, which a one-shot listener misses.
 */
async function settle(page: Page, watch: NavigationWatch, options: CaptureOptions, until: number): Promise<boolean> {
  for (;;) {
    // A page that navigates again before each load settles: the chain ends at the bound here too.
    await atBound(page, watch);
    if (!watch.pending && reached(await readyState(page), options.waitUntil)) break;
    if (Date.now() >= until) return false;
    await watch.next(POLL_MS);
  }
  if (options.waitUntil !== 'networkidle0' && options.waitUntil !== 'networkidle2') return true;
  const timeout = until - Date.now();
  if (timeout <= 0) return false;
  return page.waitForNetworkIdle({ idleTime: 500, concurrency: options.waitUntil === 'networkidle0' ? 0 : 2, timeout }).then(
    () => true,
    (error: unknown) => {
      if (isTimeout(error)) return false;
      throw error;
    },
  );
}

/**
 * Best attempt: once the wait condition has had its budget, the page is captured if its main
 * document has rendered (committed and parsed: DOMContentLoaded). A document still arriving gets
 * until LAST_LOOK_MS before the deadline to get that far; then the capture times out (504).
 */
async function rendered(page: Page, watch: NavigationWatch, firstCommit: number, request: GuardedRequest): Promise<boolean> {
  const until = request.deadline - LAST_LOOK_MS;
  for (;;) {
    if (watch.commits > firstCommit && !watch.pending && !watch.onErrorPage()) {
      const state = await guard(readyState(page), request, 'loading the page');
      if (state !== undefined && state !== 'loading') return true;
    }
    if (watch.onErrorPage() || Date.now() >= until) return false;
    await watch.next(POLL_MS);
  }
}

/**
 * Opens `target`, waits for options.waitUntil within its budget (best attempt past it), then follows
 * the navigations the page starts by itself, so that the capture shows where the browser ends up.
 */
export async function navigate(
  page: Page,
  target: string,
  options: CaptureOptions,
  request: GuardedRequest,
  watch: NavigationWatch,
): Promise<Landing> {
  const firstCommit = watch.commits;
  let waitTimedOut = false;
  let replaced = false;
  try {
    await guard(page.goto(target, { waitUntil: options.waitUntil, timeout: waitBudgetMs(request, options) }), request, 'loading the page');
  } catch (error) {
    // A script of the first document sent the page elsewhere before it loaded (puppeteer's goto then
    // fails as aborted): followed below. Without a first document (a download) it stays a failure.
    replaced = error instanceof Error && /net::ERR_ABORTED/.test(error.message) && watch.commits > firstCommit;
    if (!replaced) {
      if (!isTimeout(error) || options.failOnWaitTimeout) throw error;
      if (!(await rendered(page, watch, firstCommit, request))) throw new CaptureTimeoutError('loading the page');
      waitTimedOut = true;
    }
  }
  waitTimedOut = (await follow(page, watch, options, request, replaced ? firstCommit : watch.commits)) || waitTimedOut;
  return landingOf(watch, waitTimedOut);
}

/**
 * Follows the navigations the loaded page starts by itself, each waited for like the first one:
 * those under way, and those it has scheduled within the redirect window (scheduled-navigation.ts).
 * `since` is the count of commits already waited for. At MAX_FOLLOWED the chain ends on the page
 * reached (endChain). Returns whether a wait ran out of its budget (the page is then taken as it is).
 */
export async function follow(
  page: Page,
  watch: NavigationWatch,
  options: CaptureOptions,
  request: GuardedRequest,
  since = watch.commits,
): Promise<boolean> {
  let timedOut = false;
  let seen = since;
  // Each turn waits for one document; past the bound only those already on their way are left.
  for (let turn = 0; turn <= MAX_FOLLOWED + 2; turn++) {
    const ended = await guard(atBound(page, watch), request, 'checking for navigations after load');
    if (!watch.pending && watch.commits === seen) {
      if (ended) break;
      const waitEnd = Date.now() + waitBudgetMs(request, options);
      if (!(await guard(awaitScheduledNavigation(page, watch, waitEnd), request, 'checking for navigations after load'))) break;
    }
    const before = watch.commits;
    const until = Date.now() + waitBudgetMs(request, options);
    if (!(await guard(settle(page, watch, options, until), request, 'loading the page'))) {
      if (!options.failOnWaitTimeout && (await rendered(page, watch, before - 1, request))) timedOut = true;
      else if (!watch.onErrorPage()) throw new CaptureTimeoutError('loading the page');
    }
    seen = watch.commits;
    if (watch.onErrorPage()) break;
  }
  return timedOut;
}

/** The capture of a browser error page is never sold: it is the target's network error, naming host and error. */
export function unreachable(url: string | undefined, errorText: string | undefined): CaptureError {
  let host = 'the target';
  try {
    if (url) host = new URL(url).host;
  } catch {
    // keep the generic name
  }
  const code = errorText && /net::ERR_[A-Z_]+/.exec(errorText)?.[0];
  const what = code === 'net::ERR_NAME_NOT_RESOLVED' ? 'does not resolve' : 'did not answer';
  return new CaptureError(
    'target-unreachable',
    `The page could not be loaded: ${host} ${what} (${code ?? 'network error'}); nothing was charged`,
    {
      details: { host, error: code ?? 'network error', ...(url ? { url } : {}) },
      ...(url ? { targetHeaders: { 'X-Final-Url': url } } : {}),
    },
  );
}

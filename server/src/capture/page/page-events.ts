import { INSIGHT_LIMITS } from '@daguerre/contract';
import type { ConsoleMessage, HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';
import type { ConnectionFailure } from './landing-checks.js';

/**
 * What the page said while it loaded (docs/page-insight.md, metadata): console errors and uncaught
 * exceptions, and the requests that failed (a network error, or an HTTP 4xx/5xx answer). Counted in
 * full; only the first few are kept, each message cut short, so a noisy page costs no memory.
 */

const MESSAGE_MAX_CHARS = 500;

export interface PageEventLog {
  consoleErrors: { count: number; first: Array<{ message: string; url?: string }> };
  failedRequests: { count: number; first: Array<{ url: string; resourceType: string; reason: string }> };
}

export interface PageEventRecorder {
  log: PageEventLog;
  stop(): void;
}

const cut = (text: string) => (text.length > MESSAGE_MAX_CHARS ? `${text.slice(0, MESSAGE_MAX_CHARS - 1)}…` : text);

/**
 * Starts listening on the page (before navigation); `stop()` removes the listeners. Chromium names
 * every connection the egress proxy could not make ERR_SOCKS_CONNECTION_FAILED; `connectionFailure`
 * gives the destination's own error where the proxy may name it (landing-checks.ts).
 */
export function recordPageEvents(page: Page, connectionFailure?: ConnectionFailure): PageEventRecorder {
  const log: PageEventLog = { consoleErrors: { count: 0, first: [] }, failedRequests: { count: 0, first: [] } };
  const keep = INSIGHT_LIMITS.listedEntries;
  const consoleError = (entry: { message: string; url?: string }) => {
    log.consoleErrors.count += 1;
    if (log.consoleErrors.first.length < keep) log.consoleErrors.first.push(entry);
  };
  const failed = (request: HTTPRequest, reason: string) => {
    const url = request.url();
    // Inline data is not a request the target made over the network.
    if (url.startsWith('data:')) return;
    log.failedRequests.count += 1;
    if (log.failedRequests.first.length < keep)
      log.failedRequests.first.push({ url: cut(url), resourceType: request.resourceType(), reason });
  };

  const onConsole = (message: ConsoleMessage) => {
    // Chromium also logs each failed load as a console error: those are counted as failed requests.
    if (message.type() !== 'error' || message.text().startsWith('Failed to load resource:')) return;
    const url = message.location()?.url;
    consoleError({ message: cut(message.text()), ...(url ? { url: cut(url) } : {}) });
  };
  const onPageError = (error: unknown) =>
    consoleError({ message: cut(`Uncaught ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`) });
  const onRequestFailed = (request: HTTPRequest) => {
    const failure = request.failure()?.errorText ?? 'failed';
    const reason = (failure.startsWith('net::ERR_SOCKS_') && connectionFailure?.(request.url())) || failure;
    // Requests the capture itself blocked (blockResources, blockUrls, removeAds) are not the page's failures.
    if (reason === 'net::ERR_BLOCKED_BY_CLIENT') return;
    failed(request, reason);
  };
  const onResponse = (response: HTTPResponse) => {
    if (response.status() >= 400) failed(response.request(), `HTTP ${response.status()}`);
  };

  page.on('console', onConsole);
  page.on('pageerror', onPageError);
  page.on('requestfailed', onRequestFailed);
  page.on('response', onResponse);
  return {
    log,
    stop() {
      page.off('console', onConsole);
      page.off('pageerror', onPageError);
      page.off('requestfailed', onRequestFailed);
      page.off('response', onResponse);
    },
  };
}

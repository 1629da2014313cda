import type { Page } from 'puppeteer-core';
import { PageUnresponsiveError, pageUnresponsive } from '../browser/responsiveness-watchdog.js';
import { CaptureError, CaptureTimeoutError, ClientGoneError } from '../capture-error.js';
import { ignoreBecause } from '../../ignore-error.js';

/** A CDP call that failed because the page's renderer went away (a crash, the responsiveness watchdog). */
export const isPageGone = (error: unknown) => error instanceof Error && /Target crashed|Target closed|Session closed/i.test(error.message);

/** What a guarded stage needs from its render request. */
export interface GuardedRequest {
  /** Epoch ms by which the capture must be done. */
  deadline: number;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Rejects as soon as the page's renderer crashes (watchPageCrash) or stops answering (responsiveness-watchdog.ts). */
  pageCrash?: Promise<never>;
}

export const pageCrashed = () =>
  new CaptureError(
    'page-crashed',
    'The page crashed while it was being rendered (it may have run out of memory: each page may use at most the renderer memory cap); nothing was charged',
  );

/**
 * Rejects at once when the page's renderer dies (puppeteer's 'error' event follows CDP's
 * Inspector.targetCrashed, an out-of-memory kill or a killed process alike) or the page closes
 * under us, rather than leaving the capture to wait for its deadline.
 */
export function watchPageCrash(
  page: Page,
  explain?: () => Error | undefined,
): { crashed: Promise<never>; stop(): void; error(): Error | undefined } {
  let onCrash: () => void = () => undefined;
  let error: Error | undefined;
  const crashed = new Promise<never>((_, reject) => {
    // `explain` names a known cause (the memory watchdog ended the renderer, docs/containment.md).
    onCrash = () => reject((error ??= explain?.() ?? pageCrashed()));
  });
  crashed.catch(ignoreBecause('awaited by each stage it guards; between stages nobody is'));
  page.on('error', onCrash);
  page.on('close', onCrash);
  return {
    crashed,
    error: () => error,
    stop: () => {
      page.off('error', onCrash);
      page.off('close', onCrash);
    },
  };
}

/** A CDP call that ran into puppeteer's protocol timeout: the page is busy, which is a timeout of the stage. */
const PROTOCOL_TIMEOUT = /timed out\. Increase the 'protocolTimeout'/;
export const isProtocolTimeout = (error: unknown) => error instanceof Error && PROTOCOL_TIMEOUT.test(error.message);

/**
 * Rejects when the deadline passes, the client leaves or the page crashes, whichever comes first;
 * a protocol timeout inside the stage is that stage's CAPTURE_TIMEOUT too. A page that stopped
 * answering is that stage's PAGE_UNRESPONSIVE.
 */
export function guard<T>(work: Promise<T>, request: GuardedRequest, stage: string): Promise<T> {
  const remaining = request.deadline - Date.now();
  if (remaining <= 0) return Promise.reject(new CaptureTimeoutError(stage));
  if (request.signal.aborted) return Promise.reject(new ClientGoneError());
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CaptureTimeoutError(stage)), remaining);
    onAbort = () => reject(new ClientGoneError());
    request.signal.addEventListener('abort', onAbort, { once: true });
  });
  const mapped = work.catch((error: unknown) => {
    if (isProtocolTimeout(error)) throw new CaptureTimeoutError(stage);
    throw error;
  });
  mapped.catch(ignoreBecause('raced below; after the race is decided nobody awaits it'));
  return Promise.race([mapped, stop, ...(request.pageCrash ? [request.pageCrash] : [])])
    .catch((error: unknown) => {
      if (error instanceof PageUnresponsiveError) throw pageUnresponsive(stage, error.silentMs);
      throw error;
    })
    .finally(() => {
      clearTimeout(timer);
      if (onAbort) request.signal.removeEventListener('abort', onAbort);
    });
}

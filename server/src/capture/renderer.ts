import { MIME_TYPES, type CaptureOptions } from '@rendershot/contract';
import type { HTTPResponse, Page } from 'puppeteer';
import { ApiError } from '../errors.js';
import type { BrowserManager } from './browser-manager.js';
import { PoolSaturatedError, type ContextPool, type Slot } from './context-pool.js';
import { documentSize, removeElements, scrollThrough } from './page-actions.js';
import { effectiveViewport, preparePage, type RequestFilter } from './page-setup.js';
import { detectProtection } from './protection-detector.js';

/** Tallest output, in device pixels: Chromium returns empty WebP images beyond 16 383 px (known-traps). */
export const MAX_OUTPUT_HEIGHT_PX = 16_383;
/** A single-page PDF taller than this (CSS px; PDF pages end at 200 in) falls back to paginated A4. */
export const MAX_SINGLE_PDF_HEIGHT_PX = 19_000;

export interface RenderRequest {
  options: CaptureOptions;
  /** Epoch ms by which the capture must be done, queue time included. */
  deadline: number;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Extra request filters (ad blocking, the egress policy). */
  requestFilters?: RequestFilter[];
  /** Runs on the prepared page before navigation (ad/cookie engines). */
  beforeNavigate?: (page: Page) => Promise<void>;
  /** Runs after the page settled, before capture (cookie banner cleanup). */
  afterLoad?: (page: Page) => Promise<void>;
  /** Timing of each stage, for Server-Timing. */
  timings?: Record<string, number>;
}

export interface RenderResult {
  buffer: Buffer;
  mime: string;
  extension: string;
  /** A PNG of the same page for analysis when the output itself is a pdf. */
  analysisPng?: Buffer;
}

export class CaptureTimeoutError extends Error {
  constructor(readonly stage: string) {
    super(`capture deadline passed while ${stage}`);
  }
}

export class ClientGoneError extends Error {}

/** Rejects when the deadline passes or the client leaves, whichever comes first. */
function guard<T>(work: Promise<T>, request: RenderRequest, stage: string): Promise<T> {
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
  work.catch(() => undefined);
  return Promise.race([work, stop]).finally(() => {
    clearTimeout(timer);
    if (onAbort) request.signal.removeEventListener('abort', onAbort);
  });
}

const remainingMs = (request: RenderRequest, reserveMs = 0) => Math.max(1, request.deadline - Date.now() - reserveMs);

/** Renders one capture on a pooled page: set up, navigate, wait, clean, capture. */
export class Renderer {
  constructor(
    private readonly pool: ContextPool,
    private readonly manager: BrowserManager,
  ) {}

  async render(request: RenderRequest): Promise<RenderResult> {
    const { options } = request;
    const timings = request.timings ?? {};
    const mark = (stage: string, started: number) => (timings[stage] = Date.now() - started);

    let started = Date.now();
    const proxyServer = options.proxyUrl ? new URL(options.proxyUrl).origin : undefined;
    let slot: Slot;
    try {
      slot = await guard(this.pool.acquire(proxyServer), request, 'waiting in the capture queue');
    } catch (error) {
      if (error instanceof PoolSaturatedError) {
        throw new ApiError('SERVICE_UNAVAILABLE', 'All capture slots are busy and the queue is full; retry shortly. Nothing was charged.', {
          retryAfterSeconds: 2,
        });
      }
      throw error;
    }
    mark('queue', started);
    let stopFiltering: () => void = () => undefined;
    try {
      const page = slot.page;
      started = Date.now();
      stopFiltering = await guard(preparePage(slot, options, request.requestFilters), request, 'preparing the page');
      if (options.proxyUsername !== undefined) {
        await page.authenticate({ username: options.proxyUsername, password: options.proxyPassword ?? '' });
      }
      if (request.beforeNavigate) await guard(request.beforeNavigate(page), request, 'preparing the page');
      mark('setup', started);

      started = Date.now();
      const response = await guard(this.navigate(page, options, request), request, 'loading the page');
      mark('navigate', started);

      const verdict = await guard(detectProtection(page, response), request, 'inspecting the page');
      if (verdict.protected) {
        throw new ApiError('TARGET_PROTECTED', `The target is behind anti-bot verification (${verdict.vendor}); no screenshot was taken and no credits were used.`);
      }

      started = Date.now();
      await this.waitAndClean(page, options, request);
      if (request.afterLoad) await guard(request.afterLoad(page), request, 'cleaning the page');
      mark('wait', started);

      started = Date.now();
      const result = await guard(this.capture(page, options, request), request, 'capturing');
      mark('capture', started);
      if (this.manager.noteCapture()) this.manager.retire();
      return result;
    } catch (error) {
      // Anything unexpected (timeout, crash, client gone) leaves the page in an unknown state.
      if (!(error instanceof ApiError) || error.status >= 500) slot.doubtful = true;
      throw error;
    } finally {
      stopFiltering();
      if (slot.page.isClosed() || !slot.browser.connected) slot.doubtful = true;
      else if (!slot.doubtful) await slot.page.setRequestInterception(false).catch(() => (slot.doubtful = true));
      void this.pool.release(slot);
    }
  }

  private async navigate(page: Page, options: CaptureOptions, request: RenderRequest): Promise<HTTPResponse | null> {
    const timeout = remainingMs(request, 500);
    if (options.html !== undefined) {
      const networkIdle = options.waitUntil === 'networkidle0' || options.waitUntil === 'networkidle2';
      await page.setContent(options.html, { waitUntil: options.waitUntil === 'domcontentloaded' ? 'domcontentloaded' : 'load', timeout });
      if (networkIdle) {
        // setContent only knows load events; the network-idle variants are waited for separately.
        await page.waitForNetworkIdle({ idleTime: 500, concurrency: options.waitUntil === 'networkidle0' ? 0 : 2, timeout: remainingMs(request, 500) });
      }
      return null;
    }
    return page.goto(options.url!, { waitUntil: options.waitUntil, timeout });
  }

  private async waitAndClean(page: Page, options: CaptureOptions, request: RenderRequest): Promise<void> {
    if (options.waitForSelector) {
      // Leave time to answer before the deadline: the caller gets a clear message, not a timeout.
      const timeout = remainingMs(request, 1_500);
      try {
        await page.waitForSelector(options.waitForSelector, { timeout });
      } catch (error) {
        if (error instanceof Error && /not a valid selector|SyntaxError/i.test(error.message)) {
          throw new ApiError('INVALID_INPUT', `waitForSelector "${options.waitForSelector}" is not a valid CSS selector`);
        }
        throw new ApiError('INVALID_INPUT', `waitForSelector: no element matched "${options.waitForSelector}" within ${timeout} ms`);
      }
    }
    if (options.fullPage && options.fullPageScroll) {
      await guard(scrollThrough(page, options.fullPageScrollDuration, Math.min(5_000, remainingMs(request, 3_000))), request, 'scrolling the page');
    }
    if (options.removeSelectors?.length) {
      const invalid = await removeElements(page, options.removeSelectors);
      if (invalid.length) throw new ApiError('VALIDATION_ERROR', `removeSelectors: not valid CSS selectors: ${invalid.join(', ')}`, {
        details: invalid.map((value) => ({ field: 'removeSelectors', message: 'not a valid CSS selector', value })),
      });
    }
    if (options.delay > 0) await guard(new Promise((r) => setTimeout(r, options.delay)), request, 'waiting for the delay');
  }

  private async capture(page: Page, options: CaptureOptions, request: RenderRequest): Promise<RenderResult> {
    if (options.format === 'pdf') return this.capturePdf(page, options, request);
    const type = options.format;
    const quality = type === 'png' ? undefined : Math.round(options.imageQuality);
    const base = { type, ...(quality !== undefined ? { quality } : {}), optimizeForSpeed: true } as const;
    let buffer: Uint8Array;
    if (options.clipSelector) {
      let element;
      try {
        element = await page.$(options.clipSelector);
      } catch {
        throw new ApiError('INVALID_INPUT', `clipSelector "${options.clipSelector}" is not a valid CSS selector`);
      }
      if (!element) throw new ApiError('INVALID_INPUT', `clipSelector "${options.clipSelector}" matches no element on the page`);
      const box = await element.boundingBox();
      if (!box || box.width < 1 || box.height < 1) throw new ApiError('INVALID_INPUT', `clipSelector "${options.clipSelector}" matches an element that is not visible`);
      buffer = await element.screenshot({ ...base });
    } else if (options.fullPage) {
      const viewport = effectiveViewport(options);
      const size = await documentSize(page);
      const maxCssHeight = Math.floor(MAX_OUTPUT_HEIGHT_PX / viewport.scale);
      buffer =
        size.height <= maxCssHeight
          ? await page.screenshot({ ...base, fullPage: true })
          : // Beyond the maximum height the top of the page is captured (documented in the README).
            await page.screenshot({ ...base, clip: { x: 0, y: 0, width: size.width, height: maxCssHeight }, captureBeyondViewport: true });
    } else {
      buffer = await page.screenshot({ ...base });
    }
    return { buffer: Buffer.from(buffer), mime: MIME_TYPES[type], extension: type === 'jpeg' ? 'jpg' : type };
  }

  private async capturePdf(page: Page, options: CaptureOptions, request: RenderRequest): Promise<RenderResult> {
    const viewport = effectiveViewport(options);
    const timeout = remainingMs(request, 200);
    let buffer: Uint8Array | undefined;
    if (options.pdfPageLayout === 'single') {
      await page.emulateMediaType('screen');
      const size = await documentSize(page);
      const height = options.fullPage ? size.height : viewport.height;
      if (height <= MAX_SINGLE_PDF_HEIGHT_PX) {
        buffer = await page.pdf({ width: `${viewport.width}px`, height: `${height + 1}px`, printBackground: true, pageRanges: '1', timeout });
      }
      await page.emulateMediaType(undefined);
    }
    buffer ??= await page.pdf({
      format: 'A4',
      printBackground: true,
      margin: { top: '12mm', bottom: '12mm', left: '10mm', right: '10mm' },
      timeout,
    });
    return { buffer: Buffer.from(buffer), mime: MIME_TYPES.pdf, extension: 'pdf' };
  }

  /** A PNG of the current viewport, for AI analysis of a pdf capture. */
  static async analysisPng(page: Page): Promise<Buffer> {
    return Buffer.from(await page.screenshot({ type: 'png', optimizeForSpeed: true }));
  }
}

import { MIME_TYPES, type CaptureOptions } from '@rendershot/contract';
import type { HTTPRequest, HTTPResponse, Page } from 'puppeteer';
import { ApiError } from '../errors.js';
import type { BrowserManager } from './browser-manager.js';
import { PoolSaturatedError, type ContextPool, type Slot } from './context-pool.js';
import { captureFullPage, webpTooLarge } from './full-page.js';
import { documentSize, invalidSelectors, removeElements, scrollThrough } from './page-actions.js';
import { assertTargetStatus } from './fail-conditions.js';
import { applyPageControl } from './page-control.js';
import { effectiveViewport, emulateMedia, preparePage, type RequestFilter } from './page-setup.js';
import { compactRenderResult } from './png-encoder.js';
import { detectProtection } from './protection-detector.js';
import { guard, watchPageCrash } from './stage-guard.js';
import { bareHost } from '../security/destination-check.js';
import { REFUSED_HEADER, type UpstreamProxy } from '../security/egress-proxy.js';
import { destinationNotAllowed } from '../security/target-policy.js';

/**
 * Largest output, in device pixels, in each direction and for every format: Chromium returns empty
 * WebP images beyond 16 383 px (known-traps), and one limit for all formats keeps memory bounded.
 * Beyond it the capture is clipped to its top-left part.
 */
export const MAX_OUTPUT_HEIGHT_PX = 16_383;
export const MAX_OUTPUT_WIDTH_PX = 16_383;
/** A single-page PDF taller than this (CSS px; PDF pages end at 200 in) falls back to paginated A4. */
/** Rendered CSS pixels past which the slot's context is replaced after the capture (4 × a 1080p screen). */
const LARGE_RENDER_PIXELS = 4 * 1920 * 1080;
export const MAX_SINGLE_PDF_HEIGHT_PX = 19_000;

export interface RenderRequest {
  options: CaptureOptions;
  /** Warm renderers are reused only for the same organization. */
  organizationId?: string;
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
  /** Removes what beforeNavigate installed, however the capture ends; a failure retires the context. */
  cleanup?: () => Promise<void>;
  /** Timing of each stage, for Server-Timing. */
  timings?: Record<string, number>;
  /** Set by the renderer once it holds a page: rejects when that page crashes. */
  pageCrash?: Promise<never>;
}

export interface RenderResult {
  buffer: Buffer;
  mime: string;
  extension: string;
  /** A PNG of the same page for analysis when the output itself is a pdf. */
  analysisPng?: Buffer;
  /** True when the image was cut to the full-page budget (full-page-plan.ts). */
  truncated?: boolean;
}

export { CaptureTimeoutError, ClientGoneError } from './stage-guard.js';

/**
 * Checks every selector parameter as CSS before the page is loaded, so that a typo is a quick 400
 * naming the field rather than a wait that runs into the deadline.
 */
async function assertValidSelectors(page: Page, options: CaptureOptions): Promise<void> {
  const fields: Array<[string, string]> = [
    ...(options.clipSelector ? [['clipSelector', options.clipSelector] as [string, string]] : []),
    ...(options.waitForSelector ? [['waitForSelector', options.waitForSelector] as [string, string]] : []),
    ...(options.removeSelectors ?? []).map((selector) => ['removeSelectors', selector] as [string, string]),
    ...(options.hideSelectors ?? []).map((selector) => ['hideSelectors', selector] as [string, string]),
  ];
  const invalid = new Set(await invalidSelectors(page, fields.map(([, selector]) => selector)));
  const problems = fields.filter(([, selector]) => invalid.has(selector));
  if (problems.length === 0) return;
  throw new ApiError('VALIDATION_ERROR', `Validation failed: ${problems.map(([field, value]) => `${field}: "${value}" is not a valid CSS selector`).join('; ')}`, {
    details: problems.map(([field, value]) => ({ field, message: 'not a valid CSS selector', value })),
  });
}

/**
 * The proxy server for Chromium (scheme, host and port) and its credentials: proxyUsername and
 * proxyPassword, or else those written into proxyUrl (http://user:pass@host:port).
 */
function proxySettings(options: CaptureOptions): { server: string; upstream: UpstreamProxy; credentials?: { username: string; password: string } } | undefined {
  if (!options.proxyUrl) return undefined;
  const url = new URL(options.proxyUrl);
  const username = options.proxyUsername ?? (url.username ? decodeURIComponent(url.username) : undefined);
  const password = options.proxyPassword ?? (url.password ? decodeURIComponent(url.password) : '');
  const credentials = username !== undefined ? { username, password } : undefined;
  const upstream: UpstreamProxy = {
    host: bareHost(url.hostname),
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    ...(credentials ?? {}),
  };
  return { server: url.origin, upstream, ...(credentials ? { credentials } : {}) };
}

const proxyCredentialsRefused = () =>
  new ApiError(
    'INVALID_INPUT',
    'The proxy of proxyUrl refused the credentials (HTTP 407 Proxy Authentication Required): check proxyUsername and proxyPassword. Nothing was charged.',
  );

const remainingMs = (request: RenderRequest, reserveMs = 0) => Math.max(1, request.deadline - Date.now() - reserveMs);

/** A loopback listener of the egress proxy that forwards one capture's traffic to the caller's proxy. */
export interface ProxyChain {
  url: string;
  close(): Promise<void>;
}

export interface RendererOptions {
  /**
   * Routes a capture with proxyUrl through the egress proxy, chained to the caller's proxy (which
   * then gets the credentials from the chain). Without it the browser context talks to the
   * caller's proxy directly and answers its 407 with proxyUsername/proxyPassword.
   */
  openProxyChain?: (upstream: UpstreamProxy) => Promise<ProxyChain>;
  /**
   * Whether the egress proxy just refused the host of a URL. An HTTPS navigation refused by the
   * proxy only shows as a failed tunnel; this tells it apart from a site that is down.
   */
  wasRefused?: (url: string) => boolean;
}

/** Renders one capture on a pooled page: set up, navigate, wait, clean, capture. */
export class Renderer {
  constructor(
    private readonly pool: ContextPool,
    private readonly manager: BrowserManager,
    private readonly options: RendererOptions = {},
  ) {}

  /** The PNG is re-encoded once the slot is back in the pool (png-encoder.ts), so the next capture renders meanwhile. */
  async render(request: RenderRequest): Promise<RenderResult> {
    return compactRenderResult(await this.renderOnSlot(request), request.timings);
  }

  private async renderOnSlot(request: RenderRequest): Promise<RenderResult> {
    const { options } = request;
    const timings = request.timings ?? {};
    const mark = (stage: string, started: number) => (timings[stage] = Date.now() - started);

    let started = Date.now();
    const proxy = proxySettings(options);
    const chain = proxy && this.options.openProxyChain ? await this.options.openProxyChain(proxy.upstream) : undefined;
    const closeChain = async () => {
      await chain?.close().catch(() => undefined);
    };
    let slot: Slot;
    const acquiring = this.pool.acquire(request.organizationId, chain?.url ?? proxy?.server);
    try {
      slot = await guard(acquiring, request, 'waiting in the capture queue');
    } catch (error) {
      // The deadline passed or the client left while queued: the slot, once granted, goes straight back.
      this.pool.abandon(acquiring);
      void acquiring.then(closeChain, closeChain);
      if (error instanceof PoolSaturatedError) {
        throw new ApiError('SERVICE_UNAVAILABLE', 'All capture slots are busy and the queue is full; retry shortly. Nothing was charged.', {
          retryAfterSeconds: 2,
        });
      }
      throw error;
    }
    mark('queue', started);
    let stopFiltering: () => void = () => undefined;
    const crash = watchPageCrash(slot.page);
    request = { ...request, pageCrash: crash.crashed };
    try {
      const page = slot.page;
      started = Date.now();
      stopFiltering = await guard(preparePage(slot, options, request.requestFilters), request, 'preparing the page');
      if (proxy?.credentials && !chain) await page.authenticate(proxy.credentials);
      await guard(assertValidSelectors(page, options), request, 'preparing the page');
      if (request.beforeNavigate) await guard(request.beforeNavigate(page), request, 'preparing the page');
      mark('setup', started);

      started = Date.now();
      // The last URL the main frame navigated to (each redirect hop is a new request).
      let navigatedTo: string | undefined;
      const onNavigation = (r: HTTPRequest) => {
        if (r.isNavigationRequest() && r.frame() === page.mainFrame()) navigatedTo = r.url();
      };
      page.on('request', onNavigation);
      const response = await guard(this.navigate(page, options, request), request, 'loading the page')
        .catch((error: unknown) => {
          // Through the egress chain a refused 407 ends the navigation with this network error.
          if (options.proxyUrl && error instanceof Error && /net::ERR_(INVALID_AUTH_CREDENTIALS|PROXY_AUTH_)/.test(error.message)) throw proxyCredentialsRefused();
          if (error instanceof Error && /net::ERR_TUNNEL_CONNECTION_FAILED/.test(error.message) && navigatedTo && this.options.wasRefused?.(navigatedTo)) {
            throw destinationNotAllowed('url');
          }
          throw error;
        })
        .finally(() => page.off('request', onNavigation));
      mark('navigate', started);
      // The egress proxy marks the answers it gives itself: a refused destination (a redirect to
      // a refused address, say) is the caller's 400; any other mark means the target was not reached.
      const egress = response?.headers()[REFUSED_HEADER];
      if (egress === 'refused') throw destinationNotAllowed('url');
      if (egress !== undefined) throw new ApiError('OPERATION_FAILED', 'The page could not be loaded (the target did not answer); nothing was charged');
      if (options.proxyUrl && response?.status() === 407) throw proxyCredentialsRefused();
      assertTargetStatus(response, options);

      const verdict = await guard(detectProtection(page, response), request, 'inspecting the page');
      if (verdict.protected) {
        throw new ApiError('TARGET_PROTECTED', `The target is behind anti-bot verification (${verdict.vendor}); no screenshot was taken and no credits were used.`);
      }

      started = Date.now();
      await this.waitAndClean(page, options, request);
      if (request.afterLoad) await guard(request.afterLoad(page), request, 'cleaning the page');
      mark('wait', started);

      started = Date.now();
      const result = await guard(this.capture(slot, options, request), request, 'capturing');
      mark('capture', started);
      if (this.manager.noteCapture()) this.manager.retire();
      return result;
    } catch (error) {
      // Anything unexpected (timeout, crash, client gone) leaves the page in an unknown state.
      if (!(error instanceof ApiError) || error.status >= 500) slot.doubtful = true;
      throw error;
    } finally {
      crash.stop();
      stopFiltering();
      await request.cleanup?.().catch(() => (slot.doubtful = true));
      if (slot.page.isClosed() || !slot.browser.connected) slot.doubtful = true;
      else if (!slot.doubtful) await slot.page.setRequestInterception(false).catch(() => (slot.doubtful = true));
      void this.pool.release(slot).finally(closeChain);
    }
  }

  private async navigate(page: Page, options: CaptureOptions, request: RenderRequest): Promise<HTTPResponse | null> {
    const timeout = remainingMs(request, 500);
    // Inline html is a real navigation to a data: URL (an opaque origin, as about:blank would be),
    // so that every waitUntil value is Chromium's own lifecycle event for that document.
    // setContent plus waitForNetworkIdle would count requests of earlier documents on this reused
    // page that puppeteer never saw finish, and wait for them forever.
    const target = options.html !== undefined ? `data:text/html;charset=utf-8;base64,${Buffer.from(options.html, 'utf8').toString('base64')}` : options.url!;
    const response = await page.goto(target, { waitUntil: options.waitUntil, timeout });
    return options.html !== undefined ? null : response;
  }

  private async waitAndClean(page: Page, options: CaptureOptions, request: RenderRequest): Promise<void> {
    if (options.waitForSelector) {
      // Leave time to answer before the deadline: the caller gets a clear message, not a timeout.
      const timeout = remainingMs(request, 1_500);
      const found = await guard(
        page.waitForSelector(options.waitForSelector, { timeout }).then(
          () => true,
          (error: unknown) => {
            if (error instanceof Error && error.name === 'TimeoutError') return false;
            throw error;
          },
        ),
        request,
        'waiting for waitForSelector',
      );
      if (!found) {
        throw new ApiError('INVALID_INPUT', `waitForSelector: no element matched "${options.waitForSelector}" within ${timeout} ms; nothing was charged`);
      }
    }
    if (options.fullPage && options.fullPageScroll) {
      await guard(scrollThrough(page, options.fullPageScrollDuration, Math.min(5_000, remainingMs(request, 3_000))), request, 'scrolling the page');
    }
    if (options.removeSelectors?.length) {
      const invalid = await guard(removeElements(page, options.removeSelectors), request, 'removing elements');
      if (invalid.length) throw new ApiError('VALIDATION_ERROR', `removeSelectors: not valid CSS selectors: ${invalid.join(', ')}`, {
        details: invalid.map((value) => ({ field: 'removeSelectors', message: 'not a valid CSS selector', value })),
      });
    }
    await guard(applyPageControl(page, options), request, 'applying page options');
    if (options.delay > 0) await guard(new Promise((r) => setTimeout(r, options.delay)), request, 'waiting for the delay');
  }

  private async capture(slot: Slot, options: CaptureOptions, request: RenderRequest): Promise<RenderResult> {
    const { page } = slot;
    if (options.format === 'pdf') return this.capturePdf(slot, options, request);
    const type = options.format;
    const quality = type === 'png' ? undefined : Math.round(options.imageQuality);
    const base = { type, ...(quality !== undefined ? { quality } : {}), optimizeForSpeed: true, omitBackground: options.omitBackground } as const;
    const viewport = effectiveViewport(options);
    // The limits in CSS pixels at this scale.
    const maxWidth = Math.floor(MAX_OUTPUT_WIDTH_PX / viewport.scale);
    const maxHeight = Math.floor(MAX_OUTPUT_HEIGHT_PX / viewport.scale);
    const tooLarge = (size: { width: number; height: number }) => size.width > maxWidth || size.height > maxHeight;
    const clipped = (size: { width: number; height: number }) => ({ x: 0, y: 0, width: Math.min(size.width, maxWidth), height: Math.min(size.height, maxHeight) });
    let buffer: Uint8Array;
    let truncated = false;
    if (options.clipSelector) {
      // The selector is valid CSS (checked before navigation).
      const element = await page.$(options.clipSelector);
      if (!element) throw new ApiError('INVALID_INPUT', `clipSelector "${options.clipSelector}" matches no element on the page; nothing was charged`);
      try {
        const box = await element.boundingBox();
        if (!box || box.width < 1 || box.height < 1) {
          throw new ApiError('INVALID_INPUT', `clipSelector "${options.clipSelector}" matches an element that is not visible (no size); nothing was charged`);
        }
        // The clip of an element screenshot is relative to the element.
        buffer = await element.screenshot(tooLarge(box) ? { ...base, clip: clipped(box) } : base);
      } finally {
        await element.dispose().catch(() => undefined);
      }
    } else if (options.fullPage) {
      const size = await documentSize(page);
      // A very tall render leaves large buffers in the kept renderer process: the context is
      // replaced rather than reused, which returns that memory (PSS drift in npm run bench).
      if (size.width * size.height > LARGE_RENDER_PIXELS) slot.doubtful = true;
      if (type === 'webp' && tooLarge(size)) throw webpTooLarge(size, viewport.scale);
      // Past one frame, png and jpeg are captured in tiles and stitched (full-page.ts).
      if (tooLarge(size) && type !== 'webp') ({ buffer, plan: { truncated } } = await captureFullPage(page, size, viewport.scale, { type, quality }));
      else buffer = tooLarge(size) ? await page.screenshot({ ...base, clip: clipped(size), captureBeyondViewport: true }) : await page.screenshot({ ...base, fullPage: true });
    } else {
      buffer = tooLarge(viewport) ? await page.screenshot({ ...base, clip: clipped(viewport) }) : await page.screenshot(base);
    }
    if (buffer.length === 0) {
      // Never hand out (and charge for) an empty file.
      throw new ApiError('OPERATION_FAILED', `The browser produced an empty ${type} image; nothing was charged. Try another format or a smaller capture.`);
    }
    return { buffer: Buffer.from(buffer), mime: MIME_TYPES[type], extension: type === 'jpeg' ? 'jpg' : type, truncated };
  }

  private async capturePdf(slot: Slot, options: CaptureOptions, request: RenderRequest): Promise<RenderResult> {
    const { page } = slot;
    const viewport = effectiveViewport(options);
    const timeout = remainingMs(request, 200);
    let buffer: Uint8Array | undefined;
    if (options.pdfPageLayout === 'single') {
      await emulateMedia(slot, options, 'screen');
      const size = await documentSize(page);
      const height = options.fullPage ? size.height : viewport.height;
      if (height <= MAX_SINGLE_PDF_HEIGHT_PX) {
        buffer = await page.pdf({ width: `${viewport.width}px`, height: `${height + 1}px`, printBackground: true, pageRanges: '1', timeout });
      }
      await emulateMedia(slot, options, '');
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

import { isVideoFormat, type CaptureOptions } from '@rendershot/contract';
import type { HTTPRequest, HTTPResponse, Page } from 'puppeteer';
import { ApiError } from '../errors.js';
import type { BrowserManager } from './browser-manager.js';
import { PoolSaturatedError, type ContextPool, type Slot } from './context-pool.js';
import { captureImage } from './capture-image.js';
import { capturePdf } from './capture-pdf.js';
import { captureVideo, type VideoSettings } from './capture-video.js';
import { invalidSelectors } from './page-actions.js';
import { assertTargetStatus } from './fail-conditions.js';
import { ScriptStillRunningError } from './page-interactions.js';
import { preparePage, type RequestFilter } from './page-setup.js';
import { pageReport, type PageReport } from './page-report.js';
import type { FullPageBudget } from './full-page-plan.js';
import { compactRenderResult } from './png-encoder.js';
import { detectProtection } from './protection-detector.js';
import { guard, watchPageCrash } from './stage-guard.js';
import { remainingMs, waitAndClean } from './wait-and-clean.js';
import { bareHost } from '../security/destination-check.js';
import { REFUSED_HEADER, type UpstreamProxy } from '../security/egress-proxy.js';
import { destinationNotAllowed } from '../security/target-policy.js';

export { MAX_OUTPUT_HEIGHT_PX, MAX_OUTPUT_WIDTH_PX } from './capture-image.js';
export { MAX_SINGLE_PDF_HEIGHT_PX } from './capture-pdf.js';

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

/** A finished capture: the file and what the page was (page-report.ts). */
export type RenderedCapture = RenderResult & { page: PageReport };

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
    ...(options.click ? [['click', options.click] as [string, string]] : []),
    ...(options.scrollIntoView ? [['scrollIntoView', options.scrollIntoView] as [string, string]] : []),
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

const targetUnreachable = () => new ApiError('OPERATION_FAILED', 'The page could not be loaded (the target did not answer); nothing was charged');

const proxyCredentialsRefused = () =>
  new ApiError(
    'INVALID_INPUT',
    'The proxy of proxyUrl refused the credentials (HTTP 407 Proxy Authentication Required): check proxyUsername and proxyPassword. Nothing was charged.',
  );

/** Time kept between a tiled image's planned end and the deadline, for the answer (and png re-encoding) after it. */
const STITCH_RESERVE_MS = 1_500;

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
  /** Largest full-page or element image (FULL_PAGE_MAX_HEIGHT_PX, FULL_PAGE_MAX_PIXELS); past it the image is cut and says so. */
  fullPageBudget?: FullPageBudget;
  /** The video encoder's binary and byte limit (capture-video.ts). */
  video?: VideoSettings;
}

/** Renders one capture on a pooled page: set up, navigate, wait, clean, capture. */
export class Renderer {
  constructor(
    private readonly pool: ContextPool,
    private readonly manager: BrowserManager,
    private readonly options: RendererOptions = {},
  ) {}

  /** The PNG is re-encoded once the slot is back in the pool (png-encoder.ts), so the next capture renders meanwhile. */
  async render(request: RenderRequest): Promise<RenderedCapture> {
    return compactRenderResult(await this.renderOnSlot(request), request.timings);
  }

  private async renderOnSlot(request: RenderRequest): Promise<RenderedCapture> {
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
          // Through the egress proxy a refused or unreachable destination is a failed SOCKS
          // connection (or, through a caller's proxy, a failed tunnel): the proxy knows which.
          if (error instanceof Error && /net::ERR_(TUNNEL_CONNECTION_FAILED|SOCKS_)/.test(error.message)) {
            if (navigatedTo && this.options.wasRefused?.(navigatedTo)) throw destinationNotAllowed('url');
            if (/net::ERR_SOCKS_/.test(error.message)) throw targetUnreachable();
          }
          throw error;
        })
        .finally(() => page.off('request', onNavigation));
      mark('navigate', started);
      // The egress proxy marks the answers it gives itself: a refused destination (a redirect to
      // a refused address, say) is the caller's 400; any other mark means the target was not reached.
      const egress = response?.headers()[REFUSED_HEADER];
      if (egress === 'refused') throw destinationNotAllowed('url');
      if (egress !== undefined) throw targetUnreachable();
      if (options.proxyUrl && response?.status() === 407) throw proxyCredentialsRefused();
      assertTargetStatus(response, options);

      const verdict = await guard(detectProtection(page, response), request, 'inspecting the page');
      if (verdict.protected) {
        throw new ApiError('TARGET_PROTECTED', `The target is behind anti-bot verification (${verdict.vendor}); no screenshot was taken and no credits were used.`);
      }

      started = Date.now();
      await waitAndClean(page, options, request);
      if (request.afterLoad) await guard(request.afterLoad(page), request, 'cleaning the page');
      mark('wait', started);

      started = Date.now();
      const file = await guard(
        isVideoFormat(options.format) ? captureVideo(slot, options, request, this.options.video)
          : options.format === 'pdf' ? capturePdf(slot, options, remainingMs(request, 200)) : captureImage(slot, options, this.options.fullPageBudget, request.deadline - STITCH_RESERVE_MS),
        request,
        'capturing',
      );
      const result: RenderedCapture = { ...file, page: await guard(pageReport(page, options, response, file.truncated === true), request, 'capturing') };
      mark('capture', started);
      if (this.manager.noteCapture()) this.manager.retire();
      return result;
    } catch (error) {
      // Anything unexpected (timeout, crash, client gone) leaves the page in an unknown state.
      // So does a caller's script still running: its page is busy.
      if (!(error instanceof ApiError) || error.status >= 500 || error instanceof ScriptStillRunningError) slot.doubtful = true;
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

  /** A PNG of the current viewport, for AI analysis of a pdf capture. */
  static async analysisPng(page: Page): Promise<Buffer> {
    return Buffer.from(await page.screenshot({ type: 'png', optimizeForSpeed: true }));
  }
}

import type { CaptureOptions } from '@daguerre/contract';
import type { Page } from 'puppeteer-core';
import type { BrowserManager } from './browser/browser-manager.js';
import type { ContextPool, Slot } from './pool/context-pool.js';
import { PoolSaturatedError } from './pool/capture-turns.js';
import type { VideoSettings } from './output/capture-video.js';
import { assertValidSelectors } from './page/selector-check.js';
import { proxySettings } from './browser/proxy-settings.js';
import { preparePage, type RequestFilter } from './page/page-setup.js';
import type { PageReport } from './page/page-report.js';
import { recordPageEvents, type PageEventRecorder } from './page/page-events.js';
import type { PageInsight } from './insight/page-insight.js';
import type { FullPageBudget } from './output/full-page-plan.js';
import { watchImageRequests, type ImageRequests } from './page/image-requests.js';
import { navigationFailure, targetHeaders, type ConnectionFailure, type WasRefused } from './page/landing-checks.js';
import { navigate, type Landing } from './page/navigation.js';
import { isContextLost, NavigationWatch } from './pool/navigation-watch.js';
import { touchAndMobile } from './page/page-setup.js';
import { withTargetHeaders } from './page/target-facts.js';
import { depart, type Departure } from './pool/parked-page.js';
import type { RenderResult } from './output/render-result.js';
import { guard, isPageGone, watchPageCrash } from './page/stage-guard.js';
import { CaptureError, isCaptureError, isInputFault, type CaptureErrorKind } from './capture-error.js';
import { watchResponsiveness } from './browser/responsiveness-watchdog.js';
import { captureAfterLanding, type SlotCapture } from './landed-page-capture.js';
import type { UpstreamProxy } from '../security/egress-proxy.js';
import { ignoreBecause } from '../ignore-error.js';

export { MAX_OUTPUT_HEIGHT_PX, MAX_OUTPUT_WIDTH_PX } from './output/capture-image.js';
export { MAX_SINGLE_PDF_HEIGHT_PX } from './output/capture-pdf.js';

export interface RenderRequest {
  options: CaptureOptions;
  /** Warm renderers are reused only for the same organization. */
  organizationId?: string;
  /** Epoch ms by which the capture must be done, queue time included. */
  deadline: number;
  /** A video's recording may go on past `deadline` while its pace says it ends by this (capture-video.ts). */
  recordingDeadline?: number;
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
  /** Set by the renderer for a full page or an element: the page's picture requests under way (image-requests.ts). */
  images?: ImageRequests;
}

/** A finished capture: the file, what the page was (page-report.ts), its quality and metadata (page-insight.ts). */
export type RenderedCapture = RenderResult & { page: PageReport } & PageInsight;

export type { RenderResult } from './output/render-result.js';

/** Answers that already say why the page ended (the watchdogs): a crash that follows them adds nothing. */
const PAGE_ENDED_BY_US: CaptureErrorKind[] = ['page-unresponsive', 'over-memory'];

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
  /** Whether the egress proxy just refused the host of a URL, and why a connection through it failed (landing-checks.ts). */
  wasRefused?: WasRefused;
  connectionFailure?: ConnectionFailure;
  /** Largest full-page or element image (FULL_PAGE_MAX_HEIGHT_PX, FULL_PAGE_MAX_PIXELS); past it the image is cut and says so. */
  fullPageBudget?: FullPageBudget;
  /** A page whose main thread does not answer this long is ended: 504 PAGE_UNRESPONSIVE (PAGE_UNRESPONSIVE_TIMEOUT_MS; 0 or absent: never). */
  unresponsiveTimeoutMs?: number;
  /** Names why a page crashed when something of ours ended its renderer (the memory watchdog). */
  explainCrash?: () => Error | undefined;
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

  /**
   * The PNG re-encoding (png-encoder.ts) starts as soon as the screenshot is back and goes on while
   * the reports are read; the slot's reset waits for it (see renderOnSlot's end).
   */
  async render(request: RenderRequest): Promise<RenderedCapture> {
    const { compacted, ...capture } = await this.renderOnSlot(request);
    return { ...capture, ...(await compacted) };
  }

  private async renderOnSlot(request: RenderRequest): Promise<SlotCapture> {
    const { options } = request;
    const timings = request.timings ?? {};
    const mark = (stage: string, started: number) => (timings[stage] = Date.now() - started);

    let started = Date.now();
    const proxy = proxySettings(options);
    const chain = proxy && this.options.openProxyChain ? await this.options.openProxyChain(proxy.upstream) : undefined;
    const closeChain = async () => {
      await chain?.close().catch(ignoreBecause('a chain that will not close must not fail the capture it served'));
    };
    let slot: Slot;
    const acquiring = this.pool.acquire(request.organizationId, chain?.url ?? proxy?.server);
    try {
      slot = await guard(acquiring, request, 'waiting in the capture queue');
    } catch (error) {
      // The deadline passed or the client left while queued: the slot, once granted, goes straight back.
      this.pool.abandon(acquiring);
      // closeChain ignores a failed close: this never rejects.
      void acquiring.then(closeChain, closeChain);
      if (error instanceof PoolSaturatedError) {
        throw new CaptureError('slots-full', 'All capture slots are busy and the queue is full; retry shortly. Nothing was charged.', {
          retryAfterSeconds: 2,
        });
      }
      throw error;
    }
    mark('queue', started);
    let stopFiltering: () => void = () => undefined;
    let encoding: Promise<unknown> | undefined;
    let watch: NavigationWatch | undefined;
    let departure: Departure | undefined;
    let events: PageEventRecorder | undefined;
    const crash = watchPageCrash(slot.page, this.options.explainCrash);
    const hang = this.options.unresponsiveTimeoutMs
      ? watchResponsiveness(slot.page, slot.session, { timeoutMs: this.options.unresponsiveTimeoutMs })
      : undefined;
    // Heard from before navigation: a full page waits for the pictures still arriving (full-page-settle.ts).
    const images = options.fullPage || options.clipSelector ? watchImageRequests(slot.page) : undefined;
    request = {
      ...request,
      pageCrash: hang ? Promise.race([hang.unresponsive, crash.crashed]) : crash.crashed,
      ...(images ? { images } : {}),
    };
    request.pageCrash!.catch(ignoreBecause('awaited by each stage it guards; between stages nobody is'));
    try {
      const page = slot.page;
      started = Date.now();
      // The previous capture's document is still there, frozen (parked-page.ts): the navigation replaces it.
      departure = await guard(depart(slot, { url: options.url, emulated: touchAndMobile(options) }), request, 'preparing the page');
      stopFiltering = await guard(preparePage(slot, options, request.requestFilters), request, 'preparing the page');
      if (proxy?.credentials && !chain) await page.authenticate(proxy.credentials);
      await guard(assertValidSelectors(page, options), request, 'preparing the page');
      if (request.beforeNavigate) await guard(request.beforeNavigate(page), request, 'preparing the page');
      mark('setup', started);
      // Console errors and failed requests, for metadata=true (page-events.ts).
      if (options.metadata) events = recordPageEvents(page, this.options.connectionFailure);

      started = Date.now();
      watch = new NavigationWatch(page, slot.events);
      const landing = await this.navigate(page, options, request, watch);
      await guard(departure.afterNavigation(), request, 'loading the page');
      mark('navigate', started);
      const result = await captureAfterLanding(slot, request, watch, landing, this.options, mark, events);
      encoding = result.compacted;
      if (this.manager.noteCapture()) this.manager.retire();
      return result;
    } catch (error) {
      // Anything unexpected (timeout, crash, client gone) leaves the page in an unknown state.
      // So does a failure of ours (capture-error.ts), and a caller's script still running: its page is busy.
      if (!isInputFault(error) || isCaptureError(error, 'script-still-running')) slot.doubtful = true;
      // A stage's CDP call can fail with the crash before the guard, or puppeteer's crash event,
      // sees it: the crash, and what ended the renderer, say why.
      // A navigation's own "frame detached" is not a crash; only a page that is really gone asks the memory watchdog.
      const explained = isCaptureError(error, ...PAGE_ENDED_BY_US);
      const gone = error instanceof Error && !(error instanceof CaptureError) && !isContextLost(error) && isPageGone(error);
      const crashed = explained ? undefined : (crash.error() ?? (gone ? this.options.explainCrash?.() : undefined));
      if (crashed) slot.doubtful = true;
      // What was known of the target goes on the error answer too (X-Target-Status, X-Final-Url).
      throw withTargetHeaders(crashed ?? error, targetHeaders(options, watch, slot.page.isClosed() ? '' : slot.page.url()));
    } finally {
      watch?.stop();
      departure?.stop();
      crash.stop();
      hang?.stop();
      images?.stop();
      stopFiltering();
      events?.stop();
      await request.cleanup?.().catch(() => (slot.doubtful = true));
      if (slot.page.isClosed() || !slot.browser.connected) slot.doubtful = true;
      else if (!slot.doubtful) await slot.page.setRequestInterception(false).catch(() => (slot.doubtful = true));
      // The reset (an about:blank navigation and the clearing) starts once the PNG is encoded: run
      // beside it on two cores, it slowed the encoding on the answer's path from 24 to 55 ms (text
      // page, 1920×1080), and the answer goes out with the encoding, before the next capture needs the slot.
      // A failed encoding is the capture's error (its caller awaits `compacted`); the slot goes back
      // all the same. release() never rejects: a reset that fails closes the slot (context-pool.ts).
      const release = () => this.pool.release(slot);
      void Promise.resolve(encoding).then(release, release).finally(closeChain);
    }
  }

  /**
   * Opens the target and follows it to where the browser ends up (navigation.ts). Inline html is a
   * real navigation to a data: URL (an opaque origin, as about:blank would be), so that every
   * waitUntil value is Chromium's own lifecycle event for that document. setContent plus
   * waitForNetworkIdle would count requests of earlier documents on this reused page that
   * puppeteer never saw finish, and wait for them forever.
   */
  private async navigate(page: Page, options: CaptureOptions, request: RenderRequest, watch: NavigationWatch): Promise<Landing> {
    const target =
      options.html !== undefined
        ? `data:text/html;charset=utf-8;base64,${Buffer.from(options.html, 'utf8').toString('base64')}`
        : options.url!;
    try {
      return await navigate(page, target, options, request, watch);
    } catch (error) {
      throw navigationFailure(error, options, watch, this.options);
    }
  }

  /** A PNG of the current viewport, for AI analysis of a pdf capture. */
  static async analysisPng(page: Page): Promise<Buffer> {
    return Buffer.from(await page.screenshot({ type: 'png', optimizeForSpeed: true }));
  }
}

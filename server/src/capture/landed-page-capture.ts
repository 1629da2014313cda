import { isVideoFormat, type CaptureOptions, type PageReport } from '@daguerre/contract';
import type { Page } from 'puppeteer-core';
import type { Slot } from './pool/context-pool.js';
import { captureFile } from './output/capture-output.js';
import { captureVideo, RECORDING_STAGE, recordingWindow, type VideoRequest, type VideoSettings } from './output/capture-video.js';
import { probeBeforeCapture } from './insight/capture-quality.js';
import type { PageEventRecorder } from './page/page-events.js';
import type { PageInsight } from './insight/page-insight.js';
import { readableDuringCapture, readCapturedPage } from './insight/capture-readers.js';
import { DEFAULT_FULL_PAGE_BUDGET, type FullPageBudget } from './output/full-page-plan.js';
import type { ImageRequests } from './page/image-requests.js';
import { assertLanded, navigationFailure, type EgressFacts } from './page/landing-checks.js';
import { follow, landingOf, type Landing } from './page/navigation.js';
import { isContextLost, type NavigationWatch } from './pool/navigation-watch.js';
import { effectiveViewport } from './page/page-setup.js';
import { compactRenderResult } from './output/png-encoder.js';
import type { RenderResult } from './output/render-result.js';
import { detectProtection } from './page/protection-detector.js';
import { guard } from './page/stage-guard.js';
import { CaptureError, CaptureTimeoutError, ClientGoneError } from './capture-error.js';
import { remainingMs, waitAndClean } from './page/wait-and-clean.js';
import { ignoreBecause } from '../ignore-error.js';

/** What the steps after loading need of the render request (renderer.ts RenderRequest). */
export interface LandedPageRequest extends VideoRequest {
  options: CaptureOptions;
  /** Runs after the page settled, before capture (cookie banner cleanup). */
  afterLoad?: (page: Page) => Promise<void>;
  /** Timing of each stage, for Server-Timing. */
  timings?: Record<string, number>;
  /** For a full page or an element: the page's picture requests under way (image-requests.ts). */
  images?: ImageRequests;
}

/** What the steps after loading need of the renderer's settings (renderer.ts RendererOptions). */
export interface LandedPageSettings extends EgressFacts {
  fullPageBudget?: FullPageBudget;
  video?: VideoSettings;
}

/** A capture as it leaves its slot: the file as Chromium wrote it, its report and insight, and its re-encoding under way. */
export type SlotCapture = RenderResult & { page: PageReport } & PageInsight & { compacted: Promise<RenderResult> };

/** Times the steps after loading start again when the page navigated under them (a late script redirect). */
const MAX_RESTARTS = 2;

/** Time kept between a full page's last wait (late pictures, a retake) and the deadline, for the answer (and png re-encoding) after it. */
const STITCH_RESERVE_MS = 1_500;

/**
 * Everything after loading: protection check, waits and cleaning, capture and report. A page that
 * navigates meanwhile (a script redirect after load) destroys the document these steps work on, or
 * leaves the one taken: the new page is then followed and the steps start again on it (at most
 * MAX_RESTARTS times).
 */
export async function captureAfterLanding(
  slot: Slot,
  request: LandedPageRequest,
  watch: NavigationWatch,
  landing: Landing,
  settings: LandedPageSettings,
  mark: (stage: string, started: number) => void,
  events?: PageEventRecorder,
): Promise<SlotCapture> {
  const { options } = request;
  for (let restart = 0; ; restart++) {
    const commits = watch.commits;
    try {
      assertLanded(landing, options, watch, settings);
      const captured = await captureLanded(slot, request, landing, settings, mark, events);
      // A navigation that began while the page was taken (a late script timer) leads to the page to
      // capture; a video shows it as it happens.
      const navigatedAway = watch.commits !== commits || watch.pending;
      if (restart >= MAX_RESTARTS || !navigatedAway || isVideoFormat(options.format)) return captured;
      captured.compacted.catch(ignoreBecause('this capture is dropped for the page navigated to'));
    } catch (error) {
      const navigatedAway = watch.commits !== commits || watch.pending;
      const stopped = error instanceof CaptureTimeoutError || error instanceof ClientGoneError || error instanceof CaptureError;
      if (restart >= MAX_RESTARTS || !(isContextLost(error) || (navigatedAway && !stopped))) throw error;
    }
    const timedOut = await follow(slot.page, watch, options, request, commits).catch((followError: unknown) => {
      throw navigationFailure(followError, options, watch, settings);
    });
    landing = landingOf(watch, landing.waitTimedOut || timedOut);
  }
}

async function captureLanded(
  slot: Slot,
  request: LandedPageRequest,
  landing: Landing,
  settings: LandedPageSettings,
  mark: (stage: string, started: number) => void,
  events?: PageEventRecorder,
): Promise<SlotCapture> {
  const { options } = request;
  const page = slot.page;
  const verdict = await guard(detectProtection(page, landing.response), request, 'inspecting the page');
  if (verdict.protected) {
    throw new CaptureError(
      'target-protected',
      `The target is behind anti-bot verification (${verdict.vendor}); no screenshot was taken and no credits were used.`,
    );
  }

  let started = Date.now();
  const budget = settings.fullPageBudget ?? DEFAULT_FULL_PAGE_BUDGET;
  const scrolled = await waitAndClean(page, options, request, Math.floor(budget.maxHeightPx / effectiveViewport(options).scale));
  if (request.afterLoad) await guard(request.afterLoad(page), request, 'cleaning the page');
  mark('wait', started);

  started = Date.now();
  // A viewport image is read while it is taken (capture-readers.ts), the height before it included; anything else once it is done.
  const beside = readableDuringCapture(options);
  const probing = guard(probeBeforeCapture(page), request, 'capturing');
  // Beside the screenshot the probe is awaited by the quality report, which a failed screenshot cuts short.
  if (beside) probing.catch(ignoreBecause('awaited by the quality report, which a failed screenshot cuts short'));
  const probe = beside ? probing : await probing;
  const limits = {
    fullPageBudget: settings.fullPageBudget,
    stopBy: request.deadline - STITCH_RESERVE_MS,
    images: request.images,
    pdfTimeoutMs: remainingMs(request, 200),
  };
  // A scrolling video is a capture mode of its own: it scrolls the page while ffmpeg encodes, and may record past the deadline (capture-video.ts).
  const video = isVideoFormat(options.format);
  const output = video
    ? guard(captureVideo(slot, options, request, settings.video), recordingWindow(request), RECORDING_STAGE)
    : guard(captureFile(slot, options, limits), request, 'capturing');
  const reads = {
    slot,
    options,
    request,
    landing,
    probe,
    stillGrowing: scrolled.stillGrowing,
    ...(events ? { events: events.log } : {}),
  };
  const readingBeside = beside ? readCapturedPage(reads, output) : undefined;
  readingBeside?.catch(ignoreBecause('awaited once the file is made, which a failed screenshot cuts short'));
  const file = await output;
  // On libvips' threads from now on; it never rejects (a file it cannot improve comes back as it was).
  const compacted = compactRenderResult(file, request.timings);
  mark('capture', started);
  started = Date.now();
  const { report, insight } = await (readingBeside ?? readCapturedPage(reads, file));
  mark('insight', started);
  return { ...file, page: report, ...insight, compacted };
}

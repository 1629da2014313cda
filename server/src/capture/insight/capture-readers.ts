import { IMAGE_FORMATS, type CaptureOptions, type PageReport } from '@daguerre/contract';
import { agreeOnGrowth, type QualityProbe } from './capture-quality.js';
import type { Slot } from '../pool/context-pool.js';
import type { Landing } from '../page/navigation.js';
import type { PageEventLog } from '../page/page-events.js';
import { readPageInsight, type PageInsight } from './page-insight.js';
import { pageReport } from '../page/page-report.js';
import type { RenderResult } from '../output/render-result.js';
import { NOT_READ, openInspectionWindow, qualityWithoutPage, reportWithoutPage } from './late-inspection.js';
import type { GuardedRequest } from '../page/stage-guard.js';
import { ignoreBecause } from '../../ignore-error.js';

/**
 * Whether what is read of the page after its capture can be read while it is taken. A viewport
 * image scrolls nothing and its screenshot changes nothing in the page, and most of its time is
 * the browser process encoding the frame, while the page's main thread is idle: the DOM scan of
 * the quality report (about 20 ms on a news page) then costs no wall time. A full page, an element
 * (both scroll) and the other formats read the page after the file, as before.
 */
export function readableDuringCapture(options: CaptureOptions): boolean {
  return !options.fullPage && !options.clipSelector && (IMAGE_FORMATS as readonly string[]).includes(options.format);
}

export interface CapturedPageInput {
  slot: Slot;
  options: CaptureOptions;
  request: GuardedRequest;
  landing: Landing;
  probe: QualityProbe | Promise<QualityProbe>;
  stillGrowing: boolean;
  events?: PageEventLog;
}

/**
 * The page report and the insight (quality, metadata) of a capture, read side by side: both only
 * read the page. `file` is a promise while it is still being taken (bounded by the caller's guard);
 * the pixels' checks wait for it. Once it is made, a reading that runs late is left out rather than
 * costing the file (late-inspection.ts).
 */
export async function readCapturedPage(
  input: CapturedPageInput,
  file: RenderResult | Promise<RenderResult>,
): Promise<{ report: PageReport; insight: PageInsight }> {
  const { slot, options, request, landing } = input;
  // Inline html has no HTTP answer of its own (its data: URL's is Chromium's, not a target's).
  const targetResponse = options.html !== undefined ? null : landing.response;
  const redirects = targetResponse ? landing.redirects : [];
  const flags = { truncated: false, waitTimedOut: landing.waitTimedOut, stillGrowing: input.stillGrowing };
  const reading = {
    report: pageReport(slot.page, options, landing.response, { ...flags, inspectionTimedOut: false }),
    insight: readPageInsight(slot, options, targetResponse, file, input.probe, input.events, redirects),
  };
  reading.report.catch(ignoreBecause('awaited once the file is made, which a failed screenshot cuts short'));
  reading.insight.catch(ignoreBecause('awaited once the file is made, which a failed screenshot cuts short'));
  const taken = await file;
  const window = openInspectionWindow(slot, request);
  const [report, insight] = await Promise.all([window.within(reading.report), window.within(reading.insight)]);
  const truncated = taken.truncated === true;
  if (report === NOT_READ || insight === NOT_READ) {
    return {
      report:
        report === NOT_READ
          ? reportWithoutPage(slot, options, landing.response, { ...flags, truncated })
          : { ...report, truncated, inspectionTimedOut: true },
      insight: insight === NOT_READ ? { quality: await qualityWithoutPage(taken, options) } : insight,
    };
  }
  // The page report and the quality report say the same about a page still growing.
  const growth = agreeOnGrowth(insight.quality, input.stillGrowing, taken.growth?.heightBefore ?? report.height);
  return { report: { ...report, truncated, stillGrowing: growth.stillGrowing }, insight: { ...insight, quality: growth.quality } };
}

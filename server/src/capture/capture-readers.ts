import { IMAGE_FORMATS, type CaptureOptions, type PageReport } from '@daguerre/contract';
import type { QualityProbe } from './capture-quality.js';
import type { Slot } from './context-pool.js';
import type { Landing } from './navigation.js';
import type { PageEventLog } from './page-events.js';
import { readPageInsight, type PageInsight } from './page-insight.js';
import { pageReport } from './page-report.js';
import type { RenderResult } from './render-result.js';
import { guard, type GuardedRequest } from './stage-guard.js';

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
 * read the page. `file` is a promise while it is still being taken; the pixels' checks wait for it.
 */
export async function readCapturedPage(
  input: CapturedPageInput,
  file: RenderResult | Promise<RenderResult>,
): Promise<{ report: PageReport; insight: PageInsight }> {
  const { slot, options, request, landing } = input;
  // Inline html has no HTTP answer of its own (its data: URL's is Chromium's, not a target's).
  const targetResponse = options.html !== undefined ? null : landing.response;
  const flags = { truncated: false, waitTimedOut: landing.waitTimedOut, stillGrowing: input.stillGrowing };
  const [report, insight, taken] = await Promise.all([
    guard(pageReport(slot.page, options, landing.response, flags), request, 'capturing'),
    guard(readPageInsight(slot, options, targetResponse, file, input.probe, input.events), request, 'inspecting the capture'),
    file,
  ]);
  return { report: { ...report, truncated: taken.truncated === true }, insight };
}

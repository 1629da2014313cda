import type { CaptureOptions, CaptureQuality, PageReport } from '@daguerre/contract';
import type { HTTPResponse } from 'puppeteer-core';
import { isOneColour } from '../output/blank-image.js';
import { assertNotBlank } from './capture-quality.js';
import type { Slot } from '../pool/context-pool.js';
import { withoutCredentials } from '../page/page-report.js';
import { effectiveViewport } from '../page/page-setup.js';
import type { RenderResult } from '../output/render-result.js';
import { guard, isPageGone, type GuardedRequest } from '../page/stage-guard.js';
import { CaptureTimeoutError } from '../capture-error.js';

/**
 * What is read of the page after its file (the page report, the quality report, the metadata) never
 * costs the file. Once the file is made the reading has until the capture's deadline, and at least
 * INSPECTION_GRACE_MS; a reading still under way then, or cut short because the page stopped
 * answering or crashed, is left out: the file is delivered and charged, the page report says
 * `inspectionTimedOut` (X-Capture-Inspection-Timed-Out) and what was not read takes its empty value.
 * Under load the reading of a busy page ran past the deadline and the finished file was thrown
 * away with a 504 (docs/capture-fidelity.md, "Reading the page after its file").
 */
export const INSPECTION_GRACE_MS = 2_000;

/** A reading that did not end within its window. */
export const NOT_READ = Symbol('not read');

const IMAGE_MIMES = new Set(['image/png', 'image/jpeg', 'image/webp']);

export interface InspectionWindow {
  /** The reading's result, or NOT_READ when it outlived the window or the page ended under it. */
  within<T>(work: Promise<T>): Promise<T | typeof NOT_READ>;
}

/**
 * Opened once the file is made. The client leaving still ends the capture, and anything the reading
 * itself answers (failOnBlank's 422, a navigation that replaced the page) still counts as before.
 */
export function openInspectionWindow(slot: Slot, request: GuardedRequest): InspectionWindow {
  // No pageCrash here: a page that ends now ends its reading, not the capture.
  const window: GuardedRequest = { deadline: Math.max(request.deadline, Date.now() + INSPECTION_GRACE_MS), signal: request.signal };
  let ended = false;
  const pageEnded = new Promise<typeof NOT_READ>((resolve) => {
    request.pageCrash?.catch(() => {
      ended = true;
      resolve(NOT_READ);
    });
  });
  const notRead = (): typeof NOT_READ => {
    // The page may still be busy with the reading, or gone: it is not used again as it is.
    slot.doubtful = true;
    return NOT_READ;
  };
  return {
    within<T>(work: Promise<T>): Promise<T | typeof NOT_READ> {
      const read = guard(work, window, 'inspecting the capture').catch((error: unknown): typeof NOT_READ => {
        const late = error instanceof CaptureTimeoutError || isPageGone(error);
        if (!late && !ended) throw error;
        return notRead();
      });
      return Promise.race([read, pageEnded.then(notRead)]);
    },
  };
}

/** The page report without the page: the navigation's status and final URL, no title, the viewport's size. */
export function reportWithoutPage(
  slot: Slot,
  options: CaptureOptions,
  response: HTTPResponse | null,
  flags: Pick<PageReport, 'truncated' | 'waitTimedOut' | 'stillGrowing'>,
): PageReport {
  const isUrl = options.html === undefined;
  const viewport = effectiveViewport(options);
  return {
    status: isUrl && response ? response.status() : null,
    finalUrl: isUrl ? withoutCredentials(slot.page.url()) : null,
    title: '',
    width: viewport.width,
    height: viewport.height,
    ...flags,
    inspectionTimedOut: true,
  };
}

/**
 * The quality report without the page: an image's pixels are still checked (blank, and failOnBlank's
 * 422 with it); nothing else is known, so the report is not ok (X-Capture-Quality: warn).
 */
export async function qualityWithoutPage(file: RenderResult, options: CaptureOptions): Promise<CaptureQuality> {
  const blank = IMAGE_MIMES.has(file.mime) && (await isOneColour(file.buffer)) === true;
  const quality: CaptureQuality = {
    ok: false,
    findings: blank ? [{ check: 'blank', message: 'The image is a single colour: nothing of the page is visible in it' }] : [],
  };
  assertNotBlank(quality, options);
  return quality;
}

import { MIME_TYPES, type CaptureOptions, type ImageFormat } from '@daguerre/contract';
import type { ElementHandle, Page } from 'puppeteer-core';
import { ApiError } from '../errors.js';
import type { Slot } from './context-pool.js';
import { captureTiles, webpTooLarge, type StitchFormat } from './full-page.js';
import {
  DEFAULT_FULL_PAGE_BUDGET,
  FRAME_LIMIT_PX,
  JPEG_LIMIT_PX,
  fitsOneFrame,
  planFullPage,
  type FullPageBudget,
  type FullPagePlan,
} from './full-page-plan.js';
import { documentSize } from './page-actions.js';
import { effectiveViewport } from './page-setup.js';
import type { RenderResult } from './render-result.js';

/**
 * Largest output of one Chromium frame, in device pixels, in each direction: Chromium returns empty
 * WebP images beyond 16 383 px (known-traps). Larger full pages and elements are captured in
 * tiles and cut at the full-page budget (full-page-plan.ts); a viewport past it is clipped.
 */
export const MAX_OUTPUT_HEIGHT_PX = FRAME_LIMIT_PX;
export const MAX_OUTPUT_WIDTH_PX = FRAME_LIMIT_PX;
/** Rendered CSS pixels past which the slot's context is replaced after the capture (4 × a 1080p screen). */
const LARGE_RENDER_PIXELS = 4 * 1920 * 1080;

type ImageType = ImageFormat;

interface Shot {
  buffer: Uint8Array;
  truncated: boolean;
}

/** A WebP holds 16 383 px per side and a JPEG 65 500: their budget never goes past that height. */
const FORMAT_LIMIT_PX: Record<ImageType, number> = { png: Number.POSITIVE_INFINITY, jpeg: JPEG_LIMIT_PX, webp: FRAME_LIMIT_PX };
const budgetFor = (type: ImageType, budget: FullPageBudget): FullPageBudget => ({
  ...budget,
  maxHeightPx: Math.min(budget.maxHeightPx, FORMAT_LIMIT_PX[type]),
});

/** Whether a region of `size` CSS px at `scale` passes WebP's 16 383 px per side. */
const tooBigForWebp = (size: { width: number; height: number }, scale: number) =>
  Math.ceil(size.width * scale) > FRAME_LIMIT_PX || Math.ceil(size.height * scale) > FRAME_LIMIT_PX;

/** Captures the page (viewport, full page or one element) as png, jpeg or webp, within the full-page budget. */
export async function captureImage(
  slot: Slot,
  options: CaptureOptions,
  budget: FullPageBudget = DEFAULT_FULL_PAGE_BUDGET,
  /** Epoch ms by which a tiled image must be stitched: past it the image is cut (and says so). */
  stopBy = Number.POSITIVE_INFINITY,
): Promise<RenderResult> {
  const { page } = slot;
  const type = options.format as ImageType;
  const quality = type === 'png' ? undefined : Math.round(options.imageQuality);
  const stitch: StitchFormat = { type, ...(quality !== undefined ? { quality } : {}) };
  // No omitBackground here: page-setup.ts set the transparent background for the whole capture.
  const base = { type, ...(quality !== undefined ? { quality } : {}), optimizeForSpeed: true } as const;
  const scale = effectiveViewport(options).scale;
  let shot: Shot;
  if (options.clipSelector) {
    // The selector is valid CSS (checked before navigation).
    const element = await page.$(options.clipSelector);
    if (!element)
      throw new ApiError('INVALID_INPUT', `clipSelector "${options.clipSelector}" matches no element on the page; nothing was charged`);
    try {
      shot = await captureElement(slot, element, options.clipSelector, scale, stitch, budgetFor(type, budget), stopBy);
    } finally {
      await element.dispose().catch(() => undefined);
    }
  } else if (options.fullPage) {
    // Fixed and sticky elements are painted where a reader at the top of the page sees them.
    await scrollToTop(page);
    const size = await documentSize(page);
    if (type === 'webp' && tooBigForWebp(size, scale)) throw webpTooLarge(size, scale);
    const plan = planFullPage(size, scale, budgetFor(type, budget));
    markLarge(slot, plan);
    // Past one frame (or the budget) the page is captured in tiles and stitched (full-page.ts).
    if (fitsOneFrame(plan, scale)) shot = { buffer: await page.screenshot({ ...base, fullPage: true }), truncated: false };
    else shot = await captureTiles(page, plan, { x: 0, y: 0 }, scale, stitch, stopBy);
  } else {
    const viewport = effectiveViewport(options);
    // Issue #12: a WebP is never shortened, silently or not: past its limit it is refused.
    if (type === 'webp' && tooBigForWebp(viewport, scale)) throw webpTooLarge(viewport, scale, 'this viewport');
    const maxWidth = Math.floor(FRAME_LIMIT_PX / scale);
    const maxHeight = Math.floor(FRAME_LIMIT_PX / scale);
    // The contract caps viewport pixels (7680×4320), so one side at most can pass a frame: clipped, and said.
    const truncated = viewport.width > maxWidth || viewport.height > maxHeight;
    const clip = { x: 0, y: 0, width: Math.min(viewport.width, maxWidth), height: Math.min(viewport.height, maxHeight) };
    shot = { buffer: await page.screenshot(truncated ? { ...base, clip } : base), truncated };
  }
  if (shot.buffer.length === 0) {
    // Never hand out (and charge for) an empty file.
    throw new ApiError(
      'OPERATION_FAILED',
      `The browser produced an empty ${type} image; nothing was charged. Try another format or a smaller capture.`,
    );
  }
  return { buffer: Buffer.from(shot.buffer), mime: MIME_TYPES[type], extension: type === 'jpeg' ? 'jpg' : type, truncated: shot.truncated };
}

/**
 * Scrolls to the top and keeps it there. A page opened at a #fragment with scroll-behavior: smooth
 * is still gliding towards it after load, and its animation moves the page again after an instant
 * scroll (measured: scrollY 12 right after scrollTo(0)): scrolling is repeated, a frame apart, until
 * the page stays at the top (bounded). Smooth scrolling changes nothing in a still image.
 * (Found and fixed by helper-14's stitching tests.)
 */
async function scrollToTop(page: Page): Promise<void> {
  await page.evaluate(async () => {
    for (const element of [document.documentElement, document.body]) element?.style.setProperty('scroll-behavior', 'auto', 'important');
    const frame = () => Promise.race([new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))), new Promise((done) => setTimeout(done, 100))]);
    for (let attempt = 0; attempt < 5; attempt++) {
      window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
      await frame();
      if (window.scrollX === 0 && window.scrollY === 0) return;
    }
  });
}

/**
 * One element, however large: its box in document coordinates is planned like a full page, so a
 * huge element is cut at the budget and captured in tiles rather than as one enormous frame.
 */
async function captureElement(
  slot: Slot,
  element: ElementHandle,
  selector: string,
  scale: number,
  format: StitchFormat,
  budget: FullPageBudget,
  stopBy: number,
): Promise<Shot> {
  const box = await element.evaluate((el) => {
    const rect = el.getBoundingClientRect();
    return { x: rect.left + window.scrollX, y: rect.top + window.scrollY, width: rect.width, height: rect.height };
  });
  if (box.width < 1 || box.height < 1) {
    throw new ApiError('INVALID_INPUT', `clipSelector "${selector}" matches an element that is not visible (no size); nothing was charged`);
  }
  if (format.type === 'webp' && tooBigForWebp(box, scale)) throw webpTooLarge(box, scale, `the element of clipSelector "${selector}"`);
  const plan = planFullPage(box, scale, budget);
  markLarge(slot, plan);
  if (fitsOneFrame(plan, scale)) {
    const { quality, type } = format;
    return {
      buffer: await element.screenshot({ type, ...(quality !== undefined ? { quality } : {}), optimizeForSpeed: true }),
      truncated: false,
    };
  }
  return captureTiles(
    slot.page as Page,
    plan,
    { x: Math.max(0, Math.floor(box.x)), y: Math.max(0, Math.floor(box.y)) },
    scale,
    format,
    stopBy,
  );
}

/**
 * A very large render leaves large buffers in the kept renderer process (PSS drift in npm run
 * bench): the reset gives the context a new renderer, which returns that memory. Replacing the
 * whole context did the same for 0.3 CPU-s more a capture of the bench's 9 600 px page (a new
 * context is about 1 CPU-s); a render cut at the budget still replaces it.
 */
function markLarge(slot: Slot, plan: FullPagePlan): void {
  if (plan.truncated) slot.doubtful = true;
  else if (plan.width * plan.height > LARGE_RENDER_PIXELS) slot.heavy = true;
}

import { MIME_TYPES, type CaptureOptions, type ImageFormat } from '@daguerre/contract';
import type { ElementHandle, Page } from 'puppeteer-core';
import { CaptureError } from '../capture-error.js';
import type { Slot } from '../pool/context-pool.js';
import { captureTiles, webpTooLarge, type StitchFormat } from './full-page.js';
import { captureFullPage, markLarge, tooBigForWebp } from './full-page-capture.js';
import {
  DEFAULT_FULL_PAGE_BUDGET,
  FRAME_LIMIT_PX,
  JPEG_LIMIT_PX,
  fitsOneFrame,
  planFullPage,
  type FullPageBudget,
} from './full-page-plan.js';
import { settleLayout } from './full-page-settle.js';
import type { ImageRequests } from '../page/image-requests.js';
import { effectiveViewport } from '../page/page-setup.js';
import type { RenderResult } from './render-result.js';
import { ignoreBecause } from '../../ignore-error.js';

/**
 * Largest output of one Chromium frame, in device pixels, in each direction: Chromium returns empty
 * WebP images beyond 16 383 px (known-traps). Larger full pages and elements are captured in
 * tiles and cut at the full-page budget (full-page-plan.ts); a viewport past it is clipped.
 */
export const MAX_OUTPUT_HEIGHT_PX = FRAME_LIMIT_PX;
export const MAX_OUTPUT_WIDTH_PX = FRAME_LIMIT_PX;
/** Longest wait for an element's late pictures before it is measured, and the time kept after it (as for a full page). */
const ELEMENT_SETTLE_MAX_MS = 5_000;
const ELEMENT_CAPTURE_RESERVE_MS = 2_000;

type ImageType = ImageFormat;

interface Shot {
  buffer: Uint8Array;
  truncated: boolean;
  growth?: RenderResult['growth'];
}

/** A WebP holds 16 383 px per side and a JPEG 65 500: their budget never goes past that height. */
const FORMAT_LIMIT_PX: Record<ImageType, number> = { png: Number.POSITIVE_INFINITY, jpeg: JPEG_LIMIT_PX, webp: FRAME_LIMIT_PX };
const budgetFor = (type: ImageType, budget: FullPageBudget): FullPageBudget => ({
  ...budget,
  maxHeightPx: Math.min(budget.maxHeightPx, FORMAT_LIMIT_PX[type]),
});

/** Captures the page (viewport, full page or one element) as png, jpeg or webp, within the full-page budget. */
export async function captureImage(
  slot: Slot,
  options: CaptureOptions,
  budget: FullPageBudget = DEFAULT_FULL_PAGE_BUDGET,
  /** Epoch ms past which a full page or element waits for nothing more (late pictures, a retake); it is never cut for time. */
  stopBy = Number.POSITIVE_INFINITY,
  /** The page's picture requests under way, heard since the capture began (image-requests.ts). */
  images?: ImageRequests,
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
      throw new CaptureError(
        'element-not-found',
        `clipSelector "${options.clipSelector}" matches no element on the page; nothing was charged`,
      );
    try {
      await settleLayout(page, images, Math.min(Date.now() + ELEMENT_SETTLE_MAX_MS, stopBy - ELEMENT_CAPTURE_RESERVE_MS));
      shot = await captureElement(slot, element, options.clipSelector, scale, stitch, budgetFor(type, budget));
    } finally {
      await element.dispose().catch(ignoreBecause('a handle whose page is gone needs no disposing'));
    }
  } else if (options.fullPage) {
    // Settled, measured, taken (in tiles past one frame) and measured again: full-page-capture.ts.
    shot = await captureFullPage(slot, { type, scale, budget: budgetFor(type, budget), stitch, base, stopBy, images });
  } else {
    const viewport = effectiveViewport(options);
    // A WebP is never shortened (docs/capture-fidelity.md), silently or not: past its limit it is refused.
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
    throw new CaptureError(
      'empty-image',
      `The browser produced an empty ${type} image; nothing was charged. Try another format or a smaller capture.`,
    );
  }
  return {
    buffer: Buffer.from(shot.buffer),
    mime: MIME_TYPES[type],
    extension: type === 'jpeg' ? 'jpg' : type,
    truncated: shot.truncated,
    ...(shot.growth ? { growth: shot.growth } : {}),
  };
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
): Promise<Shot> {
  const box = await element.evaluate((el) => {
    const rect = el.getBoundingClientRect();
    return { x: rect.left + window.scrollX, y: rect.top + window.scrollY, width: rect.width, height: rect.height };
  });
  if (box.width < 1 || box.height < 1) {
    throw new CaptureError(
      'element-not-visible',
      `clipSelector "${selector}" matches an element that is not visible (no size); nothing was charged`,
    );
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
  return captureTiles(slot.page as Page, plan, { x: Math.max(0, Math.floor(box.x)), y: Math.max(0, Math.floor(box.y)) }, scale, format);
}

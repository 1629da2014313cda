import type { Page } from 'puppeteer-core';
import type { Slot } from '../pool/context-pool.js';
import { captureTiles, webpTooLarge, type StitchFormat } from './full-page.js';
import { fitsOneFrame, FRAME_LIMIT_PX, planFullPage, type FullPageBudget, type FullPagePlan } from './full-page-plan.js';
import { settleLayout, type DocumentSize } from './full-page-settle.js';
import type { ImageRequests } from '../page/image-requests.js';
import { documentSize } from '../page/page-actions.js';

/** A full page is taken at most this many times: once, and again when its height changed meanwhile. */
const MAX_ATTEMPTS = 2;
/** Longest wait for late pictures before a full page is measured (as long as the scroll's wait for them). */
const SETTLE_MAX_MS = 5_000;
/** Time kept after that wait, before `stopBy`, for the screenshots themselves. */
const CAPTURE_RESERVE_MS = 2_000;
/** Rendered CSS pixels past which the slot's context is replaced after the capture (4 × a 1080p screen). */
const LARGE_RENDER_PIXELS = 4 * 1920 * 1080;

export interface FullPageRequest {
  type: 'png' | 'jpeg' | 'webp';
  scale: number;
  budget: FullPageBudget;
  stitch: StitchFormat;
  /** Options of an ordinary screenshot in the output format. */
  base: { type: 'png' | 'jpeg' | 'webp'; quality?: number; optimizeForSpeed: true };
  /** Epoch ms past which nothing more is waited for (late pictures, a retake); the image is never cut for time. */
  stopBy: number;
  images?: ImageRequests | undefined;
}

export interface FullPageImage {
  buffer: Uint8Array;
  /** Cut to the full-page budget (never for time). */
  truncated: boolean;
  /** CSS px: the document's height the image was planned for, and right after it was taken. */
  growth: { heightBefore: number; heightAfter: number };
}

/**
 * A full page, whole (or cut at the full-page budget, and then said so): laid out once more after
 * its late pictures settle, measured, taken in one frame or in tiles (full-page.ts), then measured
 * again. A page whose size changed while it was taken is taken again, once, when there is time for
 * it; a height still growing after that is reported (page.stillGrowing and the quality report),
 * never left out silently. See docs/capture-fidelity.md, "Late pictures and pages that change
 * while they are taken".
 */
export async function captureFullPage(slot: Slot, request: FullPageRequest): Promise<FullPageImage> {
  const { page } = slot;
  const { scale, budget } = request;
  // How long the last shot took: a retake's wait for its pictures leaves that much time for its own shot.
  let lastShotMs = 0;
  for (let attempt = 1; ; attempt++) {
    // Fixed and sticky elements are painted where a reader at the top of the page sees them.
    await scrollToTop(page);
    const settleBy = Math.min(Date.now() + SETTLE_MAX_MS, request.stopBy - CAPTURE_RESERVE_MS - lastShotMs);
    const size = await settleLayout(page, request.images, settleBy);
    if (request.type === 'webp' && tooBigForWebp(size, scale)) throw webpTooLarge(size, scale);
    const plan = planFullPage(size, scale, budget);
    markLarge(slot, plan);
    const started = Date.now();
    const shot = fitsOneFrame(plan, scale)
      ? {
          buffer: await page.screenshot({
            ...request.base,
            clip: { x: 0, y: 0, width: plan.width, height: plan.height },
            captureBeyondViewport: true,
          }),
          truncated: false,
        }
      : await captureTiles(page, plan, { x: 0, y: 0 }, scale, request.stitch);
    const after = await documentSize(page);
    const changed = !samePlan(planFullPage(after, scale, budget), plan);
    lastShotMs = Date.now() - started;
    // A retake is made when it can end before stopBy, going by how long this one took (its wait for
    // pictures is bounded by that too, above).
    const timeForAnother = Date.now() + lastShotMs + CAPTURE_RESERVE_MS < request.stopBy;
    if (!changed || attempt >= MAX_ATTEMPTS || !timeForAnother) {
      return { ...shot, growth: { heightBefore: Math.round(size.height), heightAfter: Math.round(after.height) } };
    }
  }
}

const samePlan = (a: FullPagePlan, b: FullPagePlan) => a.width === b.width && a.height === b.height;

/** Whether a region of `size` CSS px at `scale` passes WebP's 16 383 px per side. */
export const tooBigForWebp = (size: DocumentSize, scale: number) =>
  Math.ceil(size.width * scale) > FRAME_LIMIT_PX || Math.ceil(size.height * scale) > FRAME_LIMIT_PX;

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
    const frame = () =>
      Promise.race([
        new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))),
        new Promise((done) => setTimeout(done, 100)),
      ]);
    for (let attempt = 0; attempt < 5; attempt++) {
      window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
      await frame();
      if (window.scrollX === 0 && window.scrollY === 0) return;
    }
  });
}

/**
 * A very large render leaves large buffers in the kept renderer process (PSS drift in npm run
 * bench): the reset gives the context a new renderer, which returns that memory. Replacing the
 * whole context did the same for 0.3 CPU-s more a capture of the bench's 9 600 px page (a new
 * context is about 1 CPU-s); a render cut at the budget still replaces it.
 */
export function markLarge(slot: Slot, plan: FullPagePlan): void {
  if (plan.truncated) slot.doubtful = true;
  else if (plan.width * plan.height > LARGE_RENDER_PIXELS) slot.heavy = true;
}

import { availableParallelism } from 'node:os';
import type { ChangedRegion } from '@daguerre/contract';
import { Piscina } from 'piscina';
import { packageFile } from '../package-files.js';

/**
 * Two PNGs compared pixel by pixel with pixelmatch (https://github.com/mapbox/pixelmatch: YIQ colour
 * distance with a threshold, and its anti-aliasing detector so that text re-rasterized a subpixel
 * off is not a change). The work runs in a worker thread (server/workers/pixel-diff.mjs, through a
 * piscina pool): on two 1920×10000 full pages it is ~0.7 s of pixelmatch plus the decoding, which
 * on the event loop would stall every other request for as long (docs/monitors.md has the figures).
 */

export interface PixelDiff {
  /** Pixels that differ, the area only one image has included. */
  changedPixels: number;
  /** Of the larger canvas (the wider width × the taller height), 0–100. */
  diffPercent: number;
  width: number;
  height: number;
  /** Boxes around the changed areas (16 px cells joined by adjacency), largest first, at most 50. */
  regions: ChangedRegion[];
  /** The changed pixels highlighted in red over a dimmed copy of the newer capture; absent when nothing changed (or below `imageFromPercent`). */
  diffPng?: Buffer;
}

export interface PixelDiffOptions {
  /** pixelmatch's colour threshold, 0–1 (smaller is more sensitive). Default 0.1. */
  colourThreshold?: number;
  /** Make the diff image only when diffPercent reaches this (saves the encoding for runs below a monitor's threshold). Default 0. */
  imageFromPercent?: number;
}

/** One of the images is not a PNG (or not one sharp can decode). */
export class UnreadableImage extends Error {}

/**
 * The largest canvas compared (the wider width × the taller height): 1920×20833. A diff holds three
 * RGBA buffers of that many pixels (4 bytes each: 480 MB at the limit); a larger one is refused
 * rather than allowed to take the process's memory.
 */
export const MAX_DIFF_PIXELS = 40_000_000;

/** The images, or the canvas of the two, have more than MAX_DIFF_PIXELS pixels. */
export class ImageTooLarge extends Error {}

/** MAX_QUEUED diffs are already waiting for a thread. */
export class PixelDiffBusy extends Error {}

/** One thread per two cores, as for the schema checker: the pixel work never takes every core from the renders. */
const THREADS = Math.max(1, Math.floor(availableParallelism() / 2));
/** Diffs waiting for a thread; each may hold ~230 MB of pixels once running (two 1920×10000 inputs and the output). */
const MAX_QUEUED = 32;

let pool: Piscina | undefined;

function poolOf(): Piscina {
  pool ??= new Piscina({
    filename: packageFile('workers', 'pixel-diff.mjs'),
    // No thread is kept idle: a thread that drew a 10 000 px page holds its memory until it ends.
    minThreads: 0,
    maxThreads: THREADS,
    idleTimeout: 30_000,
    maxQueue: MAX_QUEUED,
  });
  return pool;
}

/** Compares `before` with `after` (both PNG bytes) on the larger of their two sizes. */
export async function diffPixels(before: Buffer, after: Buffer, options: PixelDiffOptions = {}): Promise<PixelDiff> {
  let result: Omit<PixelDiff, 'diffPng'> & { diffPng?: Uint8Array };
  try {
    result = await poolOf().run({
      before,
      after,
      threshold: options.colourThreshold ?? 0.1,
      imageFromPercent: options.imageFromPercent ?? 0,
      maxPixels: MAX_DIFF_PIXELS,
    });
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('ImageTooLarge: ')) {
      throw new ImageTooLarge(`${error.message.slice('ImageTooLarge: '.length)}: more than the ${MAX_DIFF_PIXELS} a diff compares`);
    }
    if (error instanceof Error && /task queue/i.test(error.message)) throw new PixelDiffBusy(error.message);
    // sharp's own words for a file it cannot read ("Input buffer contains unsupported image format").
    if (error instanceof Error && /unsupported image format|Input buffer|pngload|corrupt/i.test(error.message))
      throw new UnreadableImage(error.message);
    throw error;
  }
  const { diffPng, ...rest } = result;
  return { ...rest, ...(diffPng ? { diffPng: Buffer.from(diffPng.buffer, diffPng.byteOffset, diffPng.byteLength) } : {}) };
}

/** Ends the pool's threads (shutdown, tests). */
export async function closePixelDiff(): Promise<void> {
  const current = pool;
  pool = undefined;
  await current?.destroy();
}

import type { CaptureDiff } from '@daguerre/contract';
import { diffPixels } from './pixel-diff.js';
import { diffText } from './text-diff.js';

/** One capture of a comparison: its PNG and, when it was read, its page text (page-text.ts). */
export interface ComparedCapture {
  png: Buffer;
  text?: string;
}

export interface ComparedCaptures {
  /** Everything of the contract's CaptureDiff but the link to the diff image, which its caller stores and names. */
  diff: Omit<CaptureDiff, 'diffImageUrl'>;
  /** The diff image (PNG); undefined when nothing changed. */
  diffPng: Buffer | undefined;
}

/**
 * A monitor run against its baseline, or POST /diff: the pixels (pixel-diff.ts) and the words
 * (text-diff.ts). It changed when diffPercent reached the threshold and is above 0. The text is
 * compared only when both sides have one: an async capture's file carries no text, and all of the
 * other side's lines would otherwise read as added.
 */
export async function compareCaptures(input: {
  before: ComparedCapture;
  after: ComparedCapture;
  threshold: number;
}): Promise<ComparedCaptures> {
  const { before, after, threshold } = input;
  const pixels = await diffPixels(before.png, after.png, { imageFromPercent: threshold });
  const changed = pixels.diffPercent >= threshold && pixels.diffPercent > 0;
  const text =
    before.text !== undefined && after.text !== undefined ? diffText(before.text, after.text) : { textAdded: [], textRemoved: [] };
  return {
    diff: {
      diffPercent: pixels.diffPercent,
      changed,
      threshold,
      changedPixels: pixels.changedPixels,
      width: pixels.width,
      height: pixels.height,
      regions: pixels.regions,
      textAdded: text.textAdded,
      textRemoved: text.textRemoved,
    },
    diffPng: changed ? pixels.diffPng : undefined,
  };
}

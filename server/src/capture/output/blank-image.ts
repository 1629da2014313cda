import sharp from 'sharp';
import { pngCompressionRatio } from './png-header.js';

/** Channel spread (0–255) still counted as one colour: JPEG and WebP noise on a flat area. */
const ONE_COLOUR_TOLERANCE = 8;
/** Rows decoded first: a page with anything in its top part is known not blank after this many. */
const FIRST_STRIP_ROWS = 600;
/**
 * A PNG of one colour compresses far better than this, even at zlib level 1 (every row repeats the
 * one above: runs of 258-byte matches, a few hundred to one). A screenshot that compressed less holds
 * more than one colour and is not decoded at all (13 ms of a 1920×1080 capture, measured). Only
 * noise within the tolerance over the whole image would be judged differently, and that is JPEG's
 * and WebP's, whose files are decoded as before.
 */
const ONE_COLOUR_MIN_PNG_RATIO = 100;

/** Whether every pixel's channels are within the tolerance of `reference`. */
function sameColour(pixels: Uint8Array, reference: Uint8Array, channels: number): boolean {
  for (let channel = 0; channel < channels; channel++) {
    const low = reference[channel]! - ONE_COLOUR_TOLERANCE;
    const high = reference[channel]! + ONE_COLOUR_TOLERANCE;
    for (let index = channel; index < pixels.length; index += channels) {
      const value = pixels[index]!;
      if (value < low || value > high) return false;
    }
  }
  return true;
}

/**
 * Whether an image is a single colour: no pixel differs from the first one by more than the
 * tolerance in any channel. The top strip is decoded first (libvips decodes a PNG top down and
 * stops after the rows asked for), so a page with anything near its top costs a few hundred rows,
 * not the whole full-page image; only a strip that is all one colour leads to the rest. (sharp's
 * stats() took 0.6–1.1 s on a 1280×17 274 page; this takes tens of ms.)
 */
export async function isOneColour(image: Buffer): Promise<boolean | undefined> {
  const ratio = pngCompressionRatio(image);
  if (ratio !== undefined && ratio < ONE_COLOUR_MIN_PNG_RATIO) return false;
  try {
    const { width, height } = await sharp(image, { limitInputPixels: false }).metadata();
    if (!width || !height) return undefined;
    const rows = async (top: number, count: number) => {
      const { data, info } = await sharp(image, { limitInputPixels: false, sequentialRead: true })
        .extract({ left: 0, top, width, height: count })
        .raw()
        .toBuffer({ resolveWithObject: true });
      return { data, channels: info.channels };
    };
    const first = await rows(0, Math.min(FIRST_STRIP_ROWS, height));
    const reference = first.data.subarray(0, first.channels);
    if (!sameColour(first.data, reference, first.channels)) return false;
    if (height <= FIRST_STRIP_ROWS) return true;
    const rest = await rows(FIRST_STRIP_ROWS, height - FIRST_STRIP_ROWS);
    return sameColour(rest.data, reference, rest.channels);
  } catch {
    return undefined;
  }
}

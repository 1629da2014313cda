import { promisify } from 'node:util';
import { constants, inflate, inflateSync } from 'node:zlib';
import sharp, { type PngOptions } from 'sharp';
import { pngCompressionRatio, pngSize } from './png-header.js';
import type { RenderResult } from './render-result.js';

/*
 * Chromium's default PNG encoder makes normal-size files but is slow (50–350 ms more than its fast
 * mode at 1920×1080 here, measured on the bench's page set), and it runs while the capture holds
 * its browser slot; with optimizeForSpeed (every row Up-filtered, zlib level 1) it is fast but the
 * files are 1.3–1.8× larger. So the renderer takes the fast PNG and this module re-encodes it with
 * libvips (sharp's own binary, zlib-ng), started as soon as the screenshot is back, while the
 * page report and the quality report are read (renderer.ts).
 *
 * Settings chosen by measurement (docs/performance.md, "PNG size"), against Chromium's default file
 * of the same page (1920×1080, sizes ÷ Chromium's, times of the encoding alone):
 * - screen content (text, flat colours, charts) compresses best without row filters: level 6, no
 *   filter is 0.90–0.99× in 12–21 ms, where adaptive filters are 1.02–1.09×;
 * - smooth gradients and drawn pictures need filters: adaptive at level 7 is 1.03× (130 ms), where
 *   no filter is 1.35×; level 6 is 1.05× there, too close to the limit;
 * - a photograph filling the view: adaptive at level 6 is 0.99× in 240 ms; level 7 buys 3 % for
 *   150 ms more, past Chromium's own 346 ms;
 * - grey images (every pixel's red, green and blue equal: black or grey text on white) are written
 *   as one grey channel, the same pixels in a third of the data: dense type 0.49–0.55× in 80–100 ms,
 *   where its colour file was 1.03–1.19× in 140–150 ms.
 *
 * Which kind an image is, is read for free from the fast PNG itself: its raw size over its bytes.
 * Screen content compresses 20–80× even at level 1; gradients 8–12×; a photograph under 6×. Dense
 * text falls to 8–18× too, and there the fast file's rows are read (a few ms; docs/performance.md):
 * at most SCREEN_CONTENT_COLOURS colours is text, which gets the unfiltered encoding alone; more is
 * gradients or pictures, which get what the ratio says (between 12× and 18× both encodings, side by
 * side on two libvips threads, and the smaller wins); a grey image gets its one channel. Above 18×
 * the rows are not read: one streaming pipeline is fastest there, and grey text there is within
 * 1.02× in colour.
 */
const SCREEN_CONTENT = { compressionLevel: 6, adaptiveFiltering: false } as const;
const DRAWN = { compressionLevel: 7, adaptiveFiltering: true } as const;
const PHOTOGRAPH = { compressionLevel: 6, adaptiveFiltering: true } as const;
/** Raw bytes over fast-PNG bytes at or above which the image is screen content (no filter only). */
const SCREEN_CONTENT_RATIO = 18;
/** … below which it has gradients or drawn pictures (filters only) … */
const DRAWN_RATIO = 12;
/** … and below which it is mostly photograph. */
const PHOTOGRAPH_RATIO = 6;
/**
 * Between photograph and screen content, an image of at most this many colours is text and flat
 * colours (dense text with coloured links: 300–1 400), not gradients or pictures (10 000 and more).
 */
const SCREEN_CONTENT_COLOURS = 4096;
/**
 * Compressed bytes of the fast file read for its rows, in turn, before the whole (20–40 rows of
 * text at 1920 px in the first 4 KiB, a tenth of a ms): an image with more colours than text has
 * passes the count within the first steps; a grey start, or a count under the limit, leads on.
 */
const LOOK_STEPS = [4 * 1024, 16 * 1024, 64 * 1024, 128 * 1024, 256 * 1024, Infinity];
/**
 * Steps up to this many bytes are inflated on the event loop (a few ms at most: with a busy
 * renderer, a hop to the libuv pool and back cost more); the whole file off it.
 */
const LOOK_STEPS_HERE = 256 * 1024;
/** Pixel bytes past which the rows are not read: the whole image would be held in memory (eight 1920×1080 screens). */
const LOOK_MAX_RAW_BYTES = 8 * 1920 * 1080 * 3;
/** Row filter types of the fast file that its rows are read through (Chromium writes Up only; any other: not read). */
const FILTER_NONE = 0;
const FILTER_UP = 2;

const inflateAsync = promisify(inflate);

// Every capture is a new image: libvips' operation cache would only hold memory.
sharp.cache(false);

/**
 * Which encodings an image gets, judged from how well its fast PNG compressed and, between
 * photograph and screen content, from how many colours it holds (`colours`, when counted).
 */
export function encodingsFor(png: Buffer, colours?: number): PngOptions[] {
  const ratio = pngCompressionRatio(png) ?? 0;
  if (ratio >= SCREEN_CONTENT_RATIO) return [SCREEN_CONTENT];
  if (ratio >= PHOTOGRAPH_RATIO && colours !== undefined && colours <= SCREEN_CONTENT_COLOURS) return [SCREEN_CONTENT];
  if (ratio >= DRAWN_RATIO) return [SCREEN_CONTENT, DRAWN];
  // A file it cannot read for its size (ratio 0) gets the encoding that suits every kind best.
  if (ratio >= PHOTOGRAPH_RATIO || ratio === 0) return [DRAWN];
  return [PHOTOGRAPH];
}

/** The IDAT chunks' data of a PNG: its zlib stream. */
function imageData(png: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let offset = 8; offset + 8 <= png.length;) {
    const size = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    if (type === 'IEND') break;
    if (type === 'IDAT') parts.push(png.subarray(offset + 8, Math.min(offset + 8 + size, png.length)));
    offset += 12 + size;
  }
  return Buffer.concat(parts);
}

/** Whether typed arrays are little-endian here, as DataView is told to read (the four-pixel path relies on it). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Four bytes added lane by lane, each modulo 256 (the Up filter's sum, four pixels at once). */
const addBytes = (x: number, y: number) => ((x & 0x7f7f7f7f) + (y & 0x7f7f7f7f)) ^ ((x ^ y) & 0x80808080);

/**
 * Reads the grey plane of rows `from` to `to` of filtered data into `plane`; false at the first
 * pixel whose channels differ, or a row filter other than None or Up. Each filter works on every
 * channel alike, so an image is grey exactly when its filtered bytes come in equal threes, and the
 * first of each three is then the grey image's own filtered byte. Four pixels (three 32-bit words)
 * at a time when the width allows: a byte at a time held the event loop twice as long.
 */
function readGreyRows(filtered: Buffer, width: number, from: number, to: number, plane: Buffer): boolean {
  const stride = 1 + 3 * width;
  const view = new DataView(filtered.buffer, filtered.byteOffset, filtered.byteLength);
  const quads = width / 4;
  const words =
    LITTLE_ENDIAN && width % 4 === 0 && plane.byteOffset % 4 === 0
      ? new Uint32Array(plane.buffer, plane.byteOffset, plane.length / 4)
      : undefined;
  for (let y = from; y < to; y++) {
    const start = y * stride + 1;
    const filter = filtered[start - 1];
    if (filter !== FILTER_NONE && filter !== FILTER_UP) return false;
    const up = filter === FILTER_UP && y > 0;
    if (words) {
      for (let k = y * quads, end = k + quads, i = start; k < end; k++, i += 12) {
        // Grey pixels p, q, r, s are the bytes p p p q | q q r r | r s s s.
        const a = view.getInt32(i, true);
        const b = view.getInt32(i + 4, true);
        const c = view.getInt32(i + 8, true);
        const p = a & 0xff;
        const q = a >>> 24;
        const r = b >>> 24;
        const s = c >>> 24;
        if (a !== ((p * 0x10101) | (q << 24)) || b !== ((q * 0x101) | (r * 0x1010000)) || c !== (r | (s * 0x1010100))) return false;
        const grey = p | (q << 8) | (r << 16) | (s << 24);
        words[k] = up ? addBytes(grey, words[k - quads]!) : grey;
      }
      continue;
    }
    const row = y * width;
    for (let x = 0, i = start; x < width; x++, i += 3) {
      const value = filtered[i]!;
      if (value !== filtered[i + 1] || value !== filtered[i + 2]) return false;
      plane[row + x] = up ? value + plane[row - width + x]! : value;
    }
  }
  return true;
}

/**
 * A running count of the distinct colours of filtered RGB rows (None or Up), up to `limit` + 1:
 * each call reads the rows up to `to` of the same stream, inflated further each time, and returns
 * the count so far (Infinity for a row filter it does not read). An image of gradients or pictures
 * passes the limit within its first rows with them. Rows are unfiltered four bytes at a time when
 * the width allows (a byte at a time was four times slower: 30 ms at 1920×1080).
 */
function colourCounter(width: number, limit: number): (filtered: Buffer, to: number) => number {
  const stride = 1 + 3 * width;
  const seen = new Uint8Array(1 << 21); // a bit per 24-bit colour
  const row = new Uint8Array(3 * width);
  const above = new Uint8Array(3 * width);
  const rowWords = new Uint32Array(row.buffer, 0, Math.floor(row.length / 4));
  const aboveWords = new Uint32Array(above.buffer, 0, rowWords.length);
  const wordWise = width % 4 === 0;
  let count = 0;
  let next = 0;
  return (filtered, to) => {
    for (; next < to && count <= limit; next++) {
      const start = next * stride + 1;
      const filter = filtered[start - 1];
      if (filter !== FILTER_NONE && filter !== FILTER_UP) return (count = Infinity);
      above.set(row);
      row.set(filtered.subarray(start, start + row.length));
      if (filter === FILTER_UP && wordWise) for (let k = 0; k < rowWords.length; k++) rowWords[k] = addBytes(rowWords[k]!, aboveWords[k]!);
      else if (filter === FILTER_UP) for (let j = 0; j < row.length; j++) row[j] = row[j]! + above[j]!;
      let last = -1;
      for (let j = 0; j < row.length; j += 3) {
        const colour = row[j]! | (row[j + 1]! << 8) | (row[j + 2]! << 16);
        // Most pixels repeat the one before (background, the inside of boxes).
        if (colour === last) continue;
        last = colour;
        const bit = 1 << (colour & 7);
        if ((seen[colour >>> 3]! & bit) === 0) {
          seen[colour >>> 3] = seen[colour >>> 3]! | bit;
          if (++count > limit) break;
        }
      }
    }
    return count;
  };
}

/** What the fast file's rows say before any encoding: its grey plane when every pixel is grey, else how many colours it holds. */
export interface PngLook {
  grey?: { plane: Buffer; width: number; height: number };
  colours?: number;
}

/**
 * Reads an 8-bit RGB PNG's rows for its grey plane, and its colours (up to SCREEN_CONTENT_COLOURS
 * + 1) when it is not grey; nothing for any other image, or one too large to hold. The rows are
 * read from growing starts of the file (LOOK_STEPS), so an image with more colours than text has
 * is mostly known from its first rows.
 */
export async function lookAtPng(png: Buffer): Promise<PngLook> {
  const size = pngSize(png);
  // Bit depth 8, colour type 2 (RGB), not interlaced.
  if (!size || png[24] !== 8 || png[25] !== 2 || png[28] !== 0) return {};
  const { width, height } = size;
  const stride = 1 + 3 * width;
  if (stride * height > LOOK_MAX_RAW_BYTES) return {};
  const plane = Buffer.allocUnsafe(width * height);
  const data = imageData(png);
  const countTo = colourCounter(width, SCREEN_CONTENT_COLOURS);
  let grey = true;
  let greyRows = 0;
  for (const bytes of LOOK_STEPS) {
    const last = data.length <= bytes;
    // The first steps here, larger ones on the libuv pool, not the event loop; in one piece (zlib's
    // default 16 KiB chunks made it three to four times slower); never past the size the header gives.
    const options = {
      chunkSize: stride * height,
      maxOutputLength: stride * height,
      ...(last ? {} : { finishFlush: constants.Z_SYNC_FLUSH }),
    };
    const start = last ? data : data.subarray(0, bytes);
    const filtered = bytes <= LOOK_STEPS_HERE ? inflateSync(start, options) : await inflateAsync(start, options);
    const rows = Math.min(height, Math.floor(filtered.length / stride));
    if (last && rows < height) return {};
    grey = grey && readGreyRows(filtered, width, greyRows, rows, plane);
    greyRows = rows;
    if (grey && rows === height) return { grey: { plane, width, height } };
    if (!grey) {
      // Gradients and pictures often pass the count within the first rows.
      const colours = countTo(filtered, rows);
      if (colours > SCREEN_CONTENT_COLOURS || rows === height) return { colours };
    }
    if (last) break;
  }
  return {};
}

/**
 * The same pixels in a smaller PNG (8-bit; the input's channels, or one grey channel when every
 * pixel is grey; no metadata). A file that libvips cannot read, or one the re-encoding would not
 * make smaller, is returned as it came: a capture never fails, or grows, for the sake of compression.
 */
export async function compactPng(png: Buffer): Promise<Buffer> {
  try {
    const candidates = await Promise.all(await encodings(png));
    const best = candidates.reduce((smallest, candidate) => (candidate.length < smallest.length ? candidate : smallest));
    return best.length < png.length ? best : png;
  } catch {
    return png;
  }
}

/**
 * Whether the fast file's rows are read before its encoding is chosen: only between photograph and
 * screen content, where the ratio's choice cost a filtered encoding (100–170 ms) that the look (a
 * few ms) spares text; elsewhere one streaming pipeline is the fastest way, and a grey image there
 * is within 1.03× in colour.
 */
export function readsRows(png: Buffer): boolean {
  const ratio = pngCompressionRatio(png) ?? 0;
  return ratio >= PHOTOGRAPH_RATIO && ratio < SCREEN_CONTENT_RATIO;
}

/** The re-encodings of a fast PNG to choose from, started. */
async function encodings(png: Buffer): Promise<Promise<Buffer>[]> {
  const look = readsRows(png) ? await lookAtPng(png).catch((): PngLook => ({})) : {};
  const { grey } = look;
  if (grey) {
    const input = { raw: { width: grey.width, height: grey.height, channels: 1 as const }, limitInputPixels: false };
    // By the fast file's ratio alone: a grey plane has few colours whether it is text or a gradient.
    return encodingsFor(png).map((settings) => sharp(grey.plane, input).toColourspace('b-w').png(settings).toBuffer());
  }
  // One streaming pipeline per encoding (decode into encode, no raw copy of the image in between).
  return encodingsFor(png, look.colours).map((settings) => sharp(png, { limitInputPixels: false }).png(settings).toBuffer());
}

/** A render result with its PNG compacted (timed as `encode`); other formats pass through. */
export async function compactRenderResult<T extends RenderResult>(result: T, timings?: Record<string, number>): Promise<T> {
  if (result.mime !== 'image/png') return result;
  const started = Date.now();
  const buffer = await compactPng(result.buffer);
  if (timings) timings.encode = Date.now() - started;
  return { ...result, buffer };
}

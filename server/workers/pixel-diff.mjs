// @ts-check
/**
 * The pixel comparison of two PNGs (server/src/monitors/pixel-diff.ts runs it through a piscina
 * pool): decode, compare with pixelmatch, draw the diff image, box the changed regions, encode.
 * pixelmatch alone takes ~700 ms on two 1920×10000 full pages (measured, docs/monitors.md): on the
 * event loop every organization shares, that would stall every request and /health for as long.
 *
 * Plain JavaScript on purpose: the same file runs in a checkout (TypeScript through tsx), under
 * vitest and from the installed package's bundle, and a worker thread gets none of their loaders.
 *
 * Decoding and encoding go through sharp (libvips, on libuv's threads; the decode of a 1920×10000
 * PNG is ~0.4 s there against ~1.8 s in pngjs). Each image is decoded once into RGBA; with equal
 * widths (the usual case: full pages of different heights) the overlap is a view of the decoded
 * pixels, not a copy, so a task holds three RGBA buffers at most (two inputs, one output).
 */
import pixelmatch from 'pixelmatch';
import sharp from 'sharp';

/** Cells of this many pixels square are the grain of the changed regions. */
const CELL = 16;
const MAX_REGIONS = 50;
/** How much of the newer capture shows under the highlight (pixelmatch's alpha: 0 white, 1 as is). */
const DIM = 0.3;
const HIGHLIGHT = /** @type {[number, number, number]} */ ([255, 0, 0]);
/** pixelmatch paints pixels it judged anti-aliasing in this colour; they are redrawn as background. */
const AA_MARK = /** @type {[number, number, number]} */ ([255, 255, 0]);
const rgba32 = (/** @type {number[]} */ [r, g, b]) => ((255 << 24) | ((b ?? 0) << 16) | ((g ?? 0) << 8) | (r ?? 0)) >>> 0;
const HIGHLIGHT_32 = rgba32(HIGHLIGHT);
const AA_MARK_32 = rgba32(AA_MARK);

sharp.cache(false);

/**
 * @param {Uint8Array} png
 * @param {number} maxPixels
 * @returns {Promise<{ data: Uint8Array; width: number; height: number }>}
 */
async function decode(png, maxPixels) {
  const { width = 0, height = 0 } = await sharp(png).metadata();
  if (width * height > maxPixels) throw new Error(`ImageTooLarge: ${width}×${height} pixels`);
  const { data, info } = await sharp(png, { limitInputPixels: false })
    .toColourspace('srgb')
    .ensureAlpha()
    .raw({ depth: 'uchar' })
    .toBuffer({ resolveWithObject: true });
  // pixelmatch reads the pixels as 32-bit words: its view needs an aligned offset.
  const aligned = data.byteOffset % 4 === 0 ? data : new Uint8Array(data);
  return { data: aligned, width: info.width, height: info.height };
}

/**
 * The top-left `width`×`height` of an image: a view when the rows are already that wide, else a copy.
 * @param {{ data: Uint8Array; width: number }} image
 */
function crop(image, width, height) {
  if (image.width === width) return image.data.subarray(0, width * height * 4);
  const out = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) out.set(image.data.subarray(y * image.width * 4, (y * image.width + width) * 4), y * width * 4);
  return out;
}

/** pixelmatch's background: the pixel's luminance blended with white. */
function dimmed(/** @type {Uint8Array} */ data, /** @type {number} */ pos) {
  const r = data[pos] ?? 0;
  const g = data[pos + 1] ?? 0;
  const b = data[pos + 2] ?? 0;
  const a = data[pos + 3] ?? 255;
  const luma = r * 0.29889531 + g * 0.58662247 + b * 0.11448223;
  return 255 + ((luma - 255) * DIM * a) / 255;
}

/**
 * Boxes around connected changed cells (8-neighbourhood), each as tight as the changed pixels in it.
 * @param {{ columns: number; rows: number; minX: Int32Array; minY: Int32Array; maxX: Int32Array; maxY: Int32Array }} grid
 */
function regionsOf(grid) {
  const { columns, rows, minX, minY, maxX, maxY } = grid;
  const seen = new Uint8Array(columns * rows);
  /** @type {{ x: number; y: number; width: number; height: number }[]} */
  const boxes = [];
  const stack = new Int32Array(columns * rows);
  for (let start = 0; start < columns * rows; start++) {
    if (seen[start] || (maxX[start] ?? -1) < 0) continue;
    let top = 0;
    stack[top++] = start;
    seen[start] = 1;
    let x0 = Infinity;
    let y0 = Infinity;
    let x1 = -1;
    let y1 = -1;
    while (top > 0) {
      const cell = /** @type {number} */ (stack[--top]);
      x0 = Math.min(x0, minX[cell] ?? x0);
      y0 = Math.min(y0, minY[cell] ?? y0);
      x1 = Math.max(x1, maxX[cell] ?? x1);
      y1 = Math.max(y1, maxY[cell] ?? y1);
      const cx = cell % columns;
      const cy = (cell / columns) | 0;
      for (let ny = Math.max(0, cy - 1); ny <= Math.min(rows - 1, cy + 1); ny++) {
        for (let nx = Math.max(0, cx - 1); nx <= Math.min(columns - 1, cx + 1); nx++) {
          const next = ny * columns + nx;
          if (seen[next] || (maxX[next] ?? -1) < 0) continue;
          seen[next] = 1;
          stack[top++] = next;
        }
      }
    }
    boxes.push({ x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 });
  }
  return boxes.sort((a, b) => b.width * b.height - a.width * a.height).slice(0, MAX_REGIONS);
}

/**
 * @param {{ before: Uint8Array; after: Uint8Array; threshold?: number; imageFromPercent?: number; maxPixels?: number }} task
 */
export default async function diffPixels(task) {
  const maxPixels = task.maxPixels ?? Number.POSITIVE_INFINITY;
  const [before, after] = await Promise.all([decode(task.before, maxPixels), decode(task.after, maxPixels)]);
  const width = Math.max(before.width, after.width);
  const height = Math.max(before.height, after.height);
  if (width * height > maxPixels) throw new Error(`ImageTooLarge: a canvas of ${width}×${height} pixels`);
  const overlapWidth = Math.min(before.width, after.width);
  const overlapHeight = Math.min(before.height, after.height);
  const output = new Uint8Array(width * height * 4);
  // With equal widths the overlap's output is the top of the whole one; else drawn apart and copied in.
  const overlapOutput =
    width === overlapWidth ? output.subarray(0, overlapWidth * overlapHeight * 4) : new Uint8Array(overlapWidth * overlapHeight * 4);
  const afterOverlap = crop(after, overlapWidth, overlapHeight);
  // The newer capture first: pixelmatch draws the background of its output from its first image.
  let changedPixels = pixelmatch(afterOverlap, crop(before, overlapWidth, overlapHeight), overlapOutput, overlapWidth, overlapHeight, {
    threshold: task.threshold ?? 0.1,
    includeAA: false,
    alpha: DIM,
    diffColor: HIGHLIGHT,
    aaColor: AA_MARK,
  });

  const columns = Math.ceil(width / CELL);
  const rows = Math.ceil(height / CELL);
  const grid = {
    columns,
    rows,
    minX: new Int32Array(columns * rows).fill(2 ** 30),
    minY: new Int32Array(columns * rows).fill(2 ** 30),
    maxX: new Int32Array(columns * rows).fill(-1),
    maxY: new Int32Array(columns * rows).fill(-1),
  };
  const mark = (/** @type {number} */ x, /** @type {number} */ y, /** @type {number} */ x1, /** @type {number} */ y1) => {
    const cell = ((y / CELL) | 0) * columns + ((x / CELL) | 0);
    if (x < /** @type {number} */ (grid.minX[cell])) grid.minX[cell] = x;
    if (y < /** @type {number} */ (grid.minY[cell])) grid.minY[cell] = y;
    if (x1 > /** @type {number} */ (grid.maxX[cell])) grid.maxX[cell] = x1;
    if (y1 > /** @type {number} */ (grid.maxY[cell])) grid.maxY[cell] = y1;
  };

  // One pass over the overlap: changed pixels into their cells, anti-aliasing redrawn as background.
  const words = new Uint32Array(overlapOutput.buffer, overlapOutput.byteOffset, overlapWidth * overlapHeight);
  if (changedPixels > 0) {
    for (let y = 0, i = 0; y < overlapHeight; y++) {
      for (let x = 0; x < overlapWidth; x++, i++) {
        const word = words[i];
        if (word === HIGHLIGHT_32) mark(x, y, x, y);
        else if (word === AA_MARK_32) {
          const grey = dimmed(afterOverlap, i * 4);
          overlapOutput[i * 4] = grey;
          overlapOutput[i * 4 + 1] = grey;
          overlapOutput[i * 4 + 2] = grey;
        }
      }
    }
  }
  if (overlapOutput !== output && overlapOutput.length > 0) {
    for (let y = 0; y < overlapHeight; y++)
      output.set(overlapOutput.subarray(y * overlapWidth * 4, (y + 1) * overlapWidth * 4), y * width * 4);
  }

  // The area only one image has counts as changed: drawn as the newer capture (when it has it) tinted with the highlight.
  const extra = width * height - overlapWidth * overlapHeight;
  if (extra > 0) {
    changedPixels += extra;
    for (let y = 0; y < height; y++) {
      const from = y < overlapHeight ? overlapWidth : 0;
      for (let x = from; x < width; x++) {
        const pos = (y * width + x) * 4;
        const inAfter = x < after.width && y < after.height;
        const grey = inAfter ? dimmed(after.data, (y * after.width + x) * 4) : 255;
        output[pos] = HIGHLIGHT[0];
        output[pos + 1] = grey * 0.55;
        output[pos + 2] = grey * 0.55;
        output[pos + 3] = 255;
      }
    }
    // Cells of the extra area, whole (clipped to the image), without touching each pixel again.
    for (let cy = 0; cy < rows; cy++) {
      for (let cx = 0; cx < columns; cx++) {
        const x0 = cx * CELL;
        const y0 = cy * CELL;
        const x1 = Math.min(width, x0 + CELL) - 1;
        const y1 = Math.min(height, y0 + CELL) - 1;
        if (y1 >= overlapHeight) mark(x0, Math.max(y0, overlapHeight), x1, y1);
        if (x1 >= overlapWidth) mark(Math.max(x0, overlapWidth), y0, x1, Math.min(y1, height - 1));
      }
    }
  }

  const diffPercent = width * height === 0 ? 0 : (changedPixels / (width * height)) * 100;
  const wantsImage = changedPixels > 0 && diffPercent >= (task.imageFromPercent ?? 0);
  const diffPng = wantsImage
    ? await sharp(output, { raw: { width, height, channels: 4 }, limitInputPixels: false })
        .png({ compressionLevel: 6, adaptiveFiltering: false })
        .toBuffer()
    : undefined;
  return { changedPixels, diffPercent, width, height, regions: changedPixels > 0 ? regionsOf(grid) : [], ...(diffPng ? { diffPng } : {}) };
}

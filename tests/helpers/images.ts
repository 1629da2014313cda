import { PDFDocument } from 'pdf-lib';
import { PNG } from 'pngjs';

export interface DecodedImage {
  width: number;
  height: number;
  /** [r, g, b, a] at CSS-independent pixel coordinates of the image. */
  pixel(x: number, y: number): [number, number, number, number];
}

export function decodePng(bytes: Uint8Array): DecodedImage {
  const png = PNG.sync.read(Buffer.from(bytes));
  return {
    width: png.width,
    height: png.height,
    pixel(x, y) {
      const i = (png.width * y + x) * 4;
      return [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!, png.data[i + 3]!];
    },
  };
}

/** True when every channel is within `tolerance` of the expected colour. */
export function near(actual: readonly number[], expected: readonly number[], tolerance = 12): boolean {
  return expected.every((value, i) => Math.abs((actual[i] ?? -999) - value) <= tolerance);
}

export async function pdfPages(bytes: Uint8Array): Promise<{ count: number; sizes: Array<{ width: number; height: number }> }> {
  const doc = await PDFDocument.load(bytes);
  return { count: doc.getPageCount(), sizes: doc.getPages().map((p) => p.getSize()) };
}

/** Width and height from a JPEG's SOF marker (no decoder needed). */
export function jpegSize(bytes: Uint8Array): { width: number; height: number } {
  let offset = 2;
  while (offset < bytes.length) {
    const marker = bytes[offset + 1]!;
    const length = (bytes[offset + 2]! << 8) + bytes[offset + 3]!;
    if (marker >= 0xc0 && marker <= 0xc3) {
      return { height: (bytes[offset + 5]! << 8) + bytes[offset + 6]!, width: (bytes[offset + 7]! << 8) + bytes[offset + 8]! };
    }
    offset += 2 + length;
  }
  throw new Error('no SOF marker');
}

/** Width and height of a WebP (VP8, VP8L or VP8X). */
export function webpSize(bytes: Uint8Array): { width: number; height: number } {
  const b = Buffer.from(bytes);
  const chunk = b.toString('ascii', 12, 16);
  if (chunk === 'VP8X') return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
  if (chunk === 'VP8L') {
    const bits = b.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
}

/** The bytes of a JSON-mode `imageData` data URI. */
export function dataUriBytes(dataUri: string): Buffer {
  const [prefix, base64] = dataUri.split(',');
  if (!prefix?.endsWith(';base64') || base64 === undefined) throw new Error(`not a base64 data URI: ${dataUri.slice(0, 40)}`);
  return Buffer.from(base64, 'base64');
}

export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One bit per pixel of a region: dark (ink) or not. Two different glyphs give different masks; tofu boxes give equal ones. */
export function inkMask(image: DecodedImage, region: Region, threshold = 128): boolean[] {
  const mask: boolean[] = [];
  for (let y = region.y; y < region.y + region.height; y++) {
    for (let x = region.x; x < region.x + region.width; x++) {
      const [r, g, b] = image.pixel(x, y);
      mask.push((r + g + b) / 3 < threshold);
    }
  }
  return mask;
}

/** Share of positions where two masks of the same region size differ (0 = identical). */
export function maskDifference(a: boolean[], b: boolean[]): number {
  if (a.length !== b.length) throw new Error('masks of different sizes');
  let differing = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) differing++;
  return differing / a.length;
}

/** Pixels of a region whose channels spread by more than `spread` (coloured, not grey/black/white). */
export function colourfulPixels(image: DecodedImage, region: Region, spread = 60): number {
  let count = 0;
  for (let y = region.y; y < region.y + region.height; y++) {
    for (let x = region.x; x < region.x + region.width; x++) {
      const [r, g, b] = image.pixel(x, y);
      if (Math.max(r, g, b) - Math.min(r, g, b) > spread) count++;
    }
  }
  return count;
}

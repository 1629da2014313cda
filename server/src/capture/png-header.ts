/** Facts read from a PNG's IHDR chunk, without decoding the image. */

/** Width × height × channels of an 8-bit PNG: the bytes of its pixels once decoded. */
export function rawPngBytes(png: Uint8Array): number | undefined {
  const bytes = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  // Signature (8) + chunk length (4) + "IHDR" (4), then width, height, bit depth, colour type.
  if (bytes.length < 33 || bytes.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  const channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[bytes[25]!];
  if (bytes[24] !== 8 || channels === undefined) return undefined;
  return bytes.readUInt32BE(16) * bytes.readUInt32BE(20) * channels;
}

/** How many times smaller the file is than its pixels (undefined for anything but an 8-bit PNG). */
export function pngCompressionRatio(png: Uint8Array): number | undefined {
  const raw = rawPngBytes(png);
  return raw === undefined || png.length === 0 ? undefined : raw / png.length;
}

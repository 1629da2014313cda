/** Facts read from a PNG's signature and IHDR chunk, without decoding the image. */

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from the IHDR chunk, or undefined when the bytes are not a PNG. */
export function pngSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Signature (8) + chunk length (4) + "IHDR" (4), then width and height.
  if (buf.length < 24 || !buf.subarray(0, 8).equals(PNG_SIGNATURE) || buf.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

/** Width × height × channels of an 8-bit PNG: the bytes of its pixels once decoded. */
export function rawPngBytes(png: Uint8Array): number | undefined {
  const size = pngSize(png);
  // After width and height: bit depth (byte 24), colour type (byte 25).
  const channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[png[25] ?? -1];
  if (!size || png[24] !== 8 || channels === undefined) return undefined;
  return size.width * size.height * channels;
}

/** How many times smaller the file is than its pixels (undefined for anything but an 8-bit PNG). */
export function pngCompressionRatio(png: Uint8Array): number | undefined {
  const raw = rawPngBytes(png);
  return raw === undefined || png.length === 0 ? undefined : raw / png.length;
}

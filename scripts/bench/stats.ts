/** Small numeric and PNG helpers for the benchmark. */
import { PNG } from 'pngjs';

/** Nearest-rank percentile (p in 0..100) of the samples; NaN for none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

export interface LatencySummary {
  n: number;
  p50Ms: number;
  p95Ms: number;
  minMs: number;
  maxMs: number;
  meanMs: number;
  /** Completed captures per second over the wall time of the sequential run. */
  throughputPerS: number;
}

export function summarize(samplesMs: readonly number[], wallMs: number): LatencySummary {
  const n = samplesMs.length;
  return {
    n,
    p50Ms: round(percentile(samplesMs, 50)),
    p95Ms: round(percentile(samplesMs, 95)),
    minMs: round(n ? Math.min(...samplesMs) : Number.NaN),
    maxMs: round(n ? Math.max(...samplesMs) : Number.NaN),
    meanMs: round(n ? samplesMs.reduce((s, x) => s + x, 0) / n : Number.NaN),
    throughputPerS: round(wallMs > 0 ? (n * 1000) / wallMs : Number.NaN, 3),
  };
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function nowMs(): number {
  return performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Width and height from the IHDR chunk (the service's own reader), or undefined when the bytes are not a PNG. */
export { pngSize } from '../../server/src/capture/output/png-header.js';

export interface Rgb {
  r: number;
  g: number;
  b: number;
}

/** Decodes a PNG and reads the colours at the given points. */
export function pixelsAt(bytes: Uint8Array, points: readonly { x: number; y: number }[]): (Rgb | undefined)[] {
  const png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return points.map(({ x, y }) => {
    const px = Math.round(x);
    const py = Math.round(y);
    if (px < 0 || py < 0 || px >= png.width || py >= png.height) return undefined;
    const i = (py * png.width + px) * 4;
    return { r: png.data[i] ?? 0, g: png.data[i + 1] ?? 0, b: png.data[i + 2] ?? 0 };
  });
}

export function colourClose(a: Rgb | undefined, b: Rgb, tolerance = 12): boolean {
  return a !== undefined && Math.abs(a.r - b.r) <= tolerance && Math.abs(a.g - b.g) <= tolerance && Math.abs(a.b - b.b) <= tolerance;
}

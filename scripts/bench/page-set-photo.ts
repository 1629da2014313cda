/**
 * The picture of the page set's `photo` page: a landscape that reads as a photograph — a smooth sky
 * with clouds, hazy mountain ridges, a lake with their reflection, and sensor noise — so that a
 * screenshot of it has a different colour in nearly every pixel, like the photos on real pages.
 * make-fixtures.ts's drawPicture draws flat bands and shapes (an illustration), which a PNG encoder
 * finds much easier. Deterministic: seeded value noise, no clock.
 */
import { PNG } from 'pngjs';
import { encodePng, mulberry32 } from './make-fixtures.js';

/** 2-D value noise on a lattice of random values, smoothly interpolated; fbm sums octaves of it. */
function valueNoise(seed: number): (x: number, y: number) => number {
  const rnd = mulberry32(seed);
  const size = 256;
  const lattice = Float32Array.from({ length: size * size }, () => rnd());
  const at = (i: number, j: number) => lattice[(((j % size) + size) % size) * size + (((i % size) + size) % size)] ?? 0;
  return (x, y) => {
    const i = Math.floor(x);
    const j = Math.floor(y);
    const fx = x - i;
    const fy = y - j;
    const sx = fx * fx * (3 - 2 * fx);
    const sy = fy * fy * (3 - 2 * fy);
    const top = at(i, j) + (at(i + 1, j) - at(i, j)) * sx;
    const bottom = at(i, j + 1) + (at(i + 1, j + 1) - at(i, j + 1)) * sx;
    return top + (bottom - top) * sy;
  };
}

function fbm(noise: (x: number, y: number) => number, x: number, y: number, octaves: number): number {
  let sum = 0;
  let amplitude = 0.5;
  let frequency = 1;
  for (let o = 0; o < octaves; o++) {
    sum += amplitude * noise(x * frequency, y * frequency);
    amplitude /= 2;
    frequency *= 2;
  }
  return sum;
}

const mix = (a: number, b: number, t: number) => a + (b - a) * t;

/** The landscape at width×height with sensor noise of ±`grain` levels. */
export function drawPhoto(width: number, height: number, seed: number, grain: number): PNG {
  const noise = valueNoise(seed);
  const rnd = mulberry32(seed + 1);
  const png = new PNG({ width, height, colorType: 2 });
  const horizon = 0.62;
  // Three ridges, far to near: the higher the ridge line, the hazier (lighter, bluer) it is.
  const ridges = [0.38, 0.47, 0.55].map((base, k) => ({
    base,
    haze: 0.65 - k * 0.25,
    line: (u: number) => base - 0.14 * fbm(noise, u * (3 + k * 2) + k * 17, k * 31.7, 5),
  }));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const u = x / width;
      let v = y / height;
      const water = v > horizon;
      // Below the horizon: the mirror image, darker and rippled.
      if (water) v = 2 * horizon - v + 0.004 * Math.sin(y * 0.9 + fbm(noise, u * 40, v * 8, 2) * 6);
      const t = v / horizon;
      let r = mix(70, 236, t);
      let g = mix(120, 196, t);
      let b = mix(196, 168, t);
      const cloud = Math.max(0, fbm(noise, u * 6 + 100, v * 14, 6) - 0.45) * 2.2 * (1 - t * 0.8);
      r = mix(r, 250, cloud);
      g = mix(g, 246, cloud);
      b = mix(b, 240, cloud);
      for (const ridge of ridges) {
        if (v < ridge.line(u)) continue;
        const shade = fbm(noise, u * 50 + ridge.base * 99, v * 50, 5);
        const base = { r: mix(38, 120, shade), g: mix(58, 120, shade), b: mix(42, 96, shade) };
        r = mix(base.r, 160, ridge.haze);
        g = mix(base.g, 176, ridge.haze);
        b = mix(base.b, 200, ridge.haze);
      }
      if (water) {
        r *= 0.72;
        g *= 0.78;
        b *= 0.86;
      }
      const n = (rnd() - 0.5) * 2 * grain;
      const i = (y * width + x) * 4;
      png.data[i] = Math.max(0, Math.min(255, Math.round(r + n)));
      png.data[i + 1] = Math.max(0, Math.min(255, Math.round(g + n)));
      png.data[i + 2] = Math.max(0, Math.min(255, Math.round(b + n)));
      png.data[i + 3] = 255;
    }
  }
  return png;
}

/** Binary search on the grain so that the PNG is close to `targetBytes` (the grain-free picture when even that is larger). */
export function photoNear(width: number, height: number, seed: number, targetBytes: number): Buffer {
  let lo = 0;
  let hi = 16;
  let best = encodePng(drawPhoto(width, height, seed, 0));
  if (best.length >= targetBytes) return best;
  for (let i = 0; i < 8; i++) {
    const mid = (lo + hi) / 2;
    const bytes = encodePng(drawPhoto(width, height, seed, mid));
    if (bytes.length <= targetBytes && targetBytes - bytes.length < targetBytes - best.length) best = bytes;
    if (bytes.length < targetBytes) lo = mid;
    else hi = mid;
  }
  return best;
}

import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { VIEWPORT } from '../../scripts/bench/baselines.js';
import { bodySnippet, isGoodPng, paintedLazyImages, statusKey } from '../../scripts/bench/checks.js';
import { lazyColour, mulberry32 } from '../../scripts/bench/make-fixtures.js';
import type { HttpResult } from '../../scripts/bench/service.js';

/** The bench's checks of what a capture returned (scripts/bench/checks.ts), on made-up answers. */

/** Only the IHDR a PNG starts with: all isGoodPng reads. */
function pngHeader(width: number, height: number): Uint8Array {
  const bytes = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes, 0);
  bytes.writeUInt32BE(13, 8);
  bytes.write('IHDR', 12, 'latin1');
  bytes.writeUInt32BE(width, 16);
  bytes.writeUInt32BE(height, 20);
  return bytes;
}
const answer = (status: number, body: Uint8Array, extra: Partial<HttpResult> = {}): HttpResult => ({
  status,
  ms: 10,
  body,
  contentType: 'image/png',
  serverTiming: '',
  ...extra,
});

describe('bench capture checks', () => {
  it('counts the lazy images painted as runs of at least 100 px down the middle column', () => {
    const png = new PNG({ width: 5, height: 400 });
    png.data.fill(255);
    const paint = (from: number, to: number, n: number) => {
      const { r, g, b } = lazyColour(n);
      for (let y = from; y < to; y++) png.data.set([r, g, b, 255], (y * 5 + 2) * 4);
    };
    paint(0, 100, 1); // a whole image
    paint(120, 219, 2); // one pixel short: not counted
    paint(250, 400, 40); // the last one
    expect(paintedLazyImages(new Uint8Array(PNG.sync.write(png)))).toBe(2);
  });

  it('accepts a 200 with a PNG of the viewport, taller only for a full page', () => {
    const { width, height } = VIEWPORT;
    expect(isGoodPng(answer(200, pngHeader(width, height)), false)).toBe(true);
    expect(isGoodPng(answer(200, pngHeader(width, height + 1)), false)).toBe(false);
    expect(isGoodPng(answer(200, pngHeader(width, 3 * height)), true)).toBe(true);
    expect(isGoodPng(answer(200, pngHeader(width, height - 1)), true)).toBe(false);
    expect(isGoodPng(answer(200, pngHeader(width - 1, height)), false)).toBe(false);
    expect(isGoodPng(answer(500, pngHeader(width, height)), false)).toBe(false);
    expect(isGoodPng(answer(200, Buffer.from('{"error":1}')), false)).toBe(false);
  });

  it('names an answer by its status, or by its network error', () => {
    expect(statusKey(answer(429, new Uint8Array()))).toBe('429');
    expect(statusKey(answer(0, new Uint8Array(), { error: 'ECONNRESET' }))).toBe('network: ECONNRESET');
    expect(statusKey(answer(0, new Uint8Array()))).toBe('network: error');
    expect(statusKey(answer(0, new Uint8Array(), { error: 'x'.repeat(200) }))).toHaveLength(80);
  });

  it('quotes the start of a body with its status, type and error', () => {
    const body = Buffer.from(`{"error":"${'y'.repeat(400)}"}`);
    expect(bodySnippet(answer(503, body, { contentType: 'application/json', error: 'late' }))).toBe(
      `503 application/json ${body.subarray(0, 300).toString()} late`,
    );
  });

  it('draws the same numbers from the same seed', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const first = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(first);
    // The committed fixtures were drawn from these: another sequence would redraw them all.
    expect(first).toEqual([0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(mulberry32(43)()).not.toBe(first[0]);
  });
});

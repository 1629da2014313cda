/**
 * What a diff costs (`npx tsx scripts/bench/diff.ts`): compareCaptures (monitors/compare-captures.ts)
 * on two page-like PNGs of 1920×1080 and of 1920×10000 (a long full page) that differ in a block
 * (a price box) and a line of text. For each: the time of a diff with its worker thread started
 * (the first diff of a process also starts the thread and loads sharp: ~0.5 s more), the longest
 * the event loop waited meanwhile, and the process's peak resident memory above its level before
 * (the worker's pixel buffers included). And, for comparison, pixelmatch alone on the event loop.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pixelmatch from 'pixelmatch';
import sharp from 'sharp';
import { compareCaptures } from '../../server/src/monitors/compare-captures.js';
import { closePixelDiff } from '../../server/src/monitors/pixel-diff.js';

const WIDTH = 1920;

/** Rows of dark "words" on an off-white page; `changed` recolours a 600×200 box and moves a line. */
function pagePixels(height: number, changed: boolean): Buffer {
  const data = Buffer.alloc(WIDTH * height * 4);
  for (let y = 0; y < height; y++) {
    const shift = changed && y >= 900 && y < 940 ? 3 : 0;
    for (let x = 0; x < WIDTH; x++) {
      const i = (y * WIDTH + x) * 4;
      const ink = y % 40 < 14 && (x + shift) % 9 < 6 && ((x + shift) * 7 + y * 3) % 11 < 6;
      data[i] = ink ? 30 : 250;
      data[i + 1] = ink ? 30 : 250;
      data[i + 2] = ink ? 30 : 245;
      data[i + 3] = 255;
    }
  }
  if (changed) {
    for (let y = 500; y < 700; y++)
      for (let x = 300; x < 900; x++) {
        const i = (y * WIDTH + x) * 4;
        data[i] = 200;
        data[i + 1] = 20;
        data[i + 2] = 20;
      }
  }
  return data;
}

const png = (height: number, changed: boolean) =>
  sharp(pagePixels(height, changed), { raw: { width: WIDTH, height, channels: 4 } })
    .png()
    .toBuffer();

async function measure(height: number) {
  const before = await png(height, false);
  const after = await png(height, true);
  const runs: Array<{ ms: number; maxLoopMs: number; peakMb: number }> = [];
  for (let run = 0; run < 4; run++) {
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const started = performance.now();
    const { diff } = await compareCaptures({ before: { png: before }, after: { png: after }, threshold: 0.1 });
    const ms = performance.now() - started;
    loop.disable();
    clearInterval(sampler);
    runs.push({ ms: Math.round(ms), maxLoopMs: Math.round(loop.max / 1e6), peakMb: Math.round((peak - rssBefore) / 1e6) });
    if (run === 0)
      console.log(
        `${WIDTH}×${height}: ${diff.diffPercent.toFixed(3)} % changed, ${diff.regions.length} regions; PNGs of ${before.length} and ${after.length} bytes`,
      );
  }
  const decoded = await Promise.all([before, after].map((p) => sharp(p).ensureAlpha().raw().toBuffer()));
  const started = performance.now();
  pixelmatch(decoded[1]!, decoded[0]!, new Uint8Array(WIDTH * height * 4), WIDTH, height, { threshold: 0.1 });
  const onLoop = Math.round(performance.now() - started);
  console.log(
    `  first diff (starts the thread): ${runs[0]!.ms} ms; then ${runs
      .slice(1)
      .map((r) => `${r.ms} ms`)
      .join(', ')}`,
  );
  console.log(
    `  longest event-loop wait during a diff: ${Math.max(...runs.map((r) => r.maxLoopMs))} ms; peak RSS above the start: ${Math.max(...runs.map((r) => r.peakMb))} MB`,
  );
  console.log(`  pixelmatch alone on the event loop: ${onLoop} ms`);
}

await measure(1080);
await measure(10_000);
await closePixelDiff();

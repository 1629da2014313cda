import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EASINGS } from '../../server/src/capture/output/video-scroll.js';
import { ownerTag } from '../../server/src/capture/browser/profile-owner.js';
import { DaguerreError } from '../../client/src/index.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodeFrames, probeVideo } from '../helpers/video.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** bands.html's colour of band i (tests/fixtures/pages/bands.html). */
const bandColour = (i: number) => [(i * 67 + 40) % 256, (i * 139 + 90) % 256, (i * 29 + 160) % 256];
const BANDS = 10;
const BAND_PX = 300;
const VIEW = { viewportWidth: 400, viewportHeight: 300 };
const BOTTOM = BANDS * BAND_PX - VIEW.viewportHeight;

function bandOf(rgb: readonly number[]): number {
  let best = 0;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (let i = 0; i < BANDS; i++) {
    const distance = bandColour(i).reduce((sum, value, channel) => sum + (value - rgb[channel]!) ** 2, 0);
    if (distance < bestDistance) [best, bestDistance] = [i, distance];
  }
  return best;
}

/**
 * The scroll offset each frame shows, read from the pixels: the band at the top row and the row
 * where the next band starts (column 200, away from any edge).
 */
async function scrollOffsets(bytes: Uint8Array, extension: string): Promise<number[]> {
  const frames = await decodeFrames(bytes, extension, VIEW.viewportWidth, VIEW.viewportHeight);
  const offsets: number[] = [];
  for (let frame = 0; frame < frames.count; frame++) {
    // Row 2, not 0: the codecs' chroma blur at the frame edge.
    const top = bandOf(frames.pixel(frame, 200, 2));
    let boundary: number | undefined;
    for (let y = 3; y < VIEW.viewportHeight; y++) {
      if (bandOf(frames.pixel(frame, 200, y)) !== top) {
        boundary = y;
        break;
      }
    }
    offsets.push(boundary === undefined ? top * BAND_PX : (top + 1) * BAND_PX - boundary);
  }
  return offsets;
}

const expectedOffsets = (easing: keyof typeof EASINGS, frames: number) =>
  Array.from({ length: frames }, (_, i) => Math.round(EASINGS[easing](i / (frames - 1)) * BOTTOM));

async function daguerreError(work: Promise<unknown>): Promise<DaguerreError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DaguerreError);
  return error as DaguerreError;
}

/** This process's encoder folders (named after their owner, video-encoder.ts): other test files record videos beside this one. */
const leftoverVideoDirectories = async () => (await readdir(tmpdir())).filter((name) => name.startsWith(`daguerre-video-${ownerTag()}`));

describe('scrolling video: mp4, webm, gif', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  const prefix = `rs-test-video-${randomBytes(4).toString('hex')}`;
  const bandsUrl = () => `${fixtures.url}/bands.html?bands=${BANDS}&height=${BAND_PX}`;
  const credits = async () => (await service.client.usage()).credits.remaining;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    service = await startTestService({
      credits: 100,
      // A small byte limit, so that a noisy gif passes it (a real -fs stop of ffmpeg).
      env: { RATE_LIMIT_MAX: '1000', VIDEO_MAX_BYTES: '400000', REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1' },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('mp4: H.264 of the viewport size, videoDuration × videoFps frames, top first, bottom last, eased and monotonic; one credit', async () => {
    const before = await credits();
    const file = await service.client.capture({ url: bandsUrl(), ...VIEW, format: 'mp4', videoDuration: 2, videoFps: 10 });
    expect(file.contentType).toBe('video/mp4');
    expect(file.fileName).toMatch(/\.mp4$/);
    const probe = await probeVideo(file.bytes, 'mp4');
    expect(probe).toMatchObject({ codec: 'h264', width: 400, height: 300, frames: 20 });
    expect(probe.duration).toBeCloseTo(2, 1);

    const offsets = await scrollOffsets(file.bytes, 'mp4');
    expect(offsets).toHaveLength(20);
    expect(offsets[0]).toBe(0);
    expect(Math.abs(offsets.at(-1)! - BOTTOM)).toBeLessThanOrEqual(2);
    for (let i = 1; i < offsets.length; i++) expect(offsets[i]!).toBeGreaterThanOrEqual(offsets[i - 1]! - 2);
    // The default easing, ease-in-out: slow at both ends, each frame where the curve puts it.
    const expected = expectedOffsets('ease-in-out', 20);
    offsets.forEach((offset, i) => expect(Math.abs(offset - expected[i]!)).toBeLessThanOrEqual(3));
    expect(before - (await credits())).toBe(1);
  });

  it('webm: VP9 with linear scrolling (equal steps) from the top to the bottom', async () => {
    const file = await service.client.capture({
      url: bandsUrl(),
      ...VIEW,
      format: 'webm',
      videoDuration: 1.5,
      videoFps: 8,
      scrollEasing: 'linear',
    });
    expect(file.contentType).toBe('video/webm');
    const probe = await probeVideo(file.bytes, 'webm');
    expect(probe).toMatchObject({ codec: 'vp9', width: 400, height: 300, frames: 12 });
    expect(probe.duration).toBeCloseTo(1.5, 1);
    const offsets = await scrollOffsets(file.bytes, 'webm');
    const expected = expectedOffsets('linear', 12);
    offsets.forEach((offset, i) => expect(Math.abs(offset - expected[i]!)).toBeLessThanOrEqual(3));
  });

  it('gif: looping GIF after the page cleanup of a screenshot, and scrollToSelector ends the scroll at that element', async () => {
    // The 5th band (index 4) starts at 1200 px: the last frame shows it at the top. A fixed banner
    // over the bands is removed by removeSelectors, as for a screenshot: left in place it would hide
    // the band edges every frame is measured by.
    const banner = '<p id="banner" style="position:fixed;top:0;left:0;right:0;height:290px;margin:0;background:rgb(255,0,0)"></p>';
    const html = `<style>body{margin:0}div{height:${BAND_PX}px}</style>${banner}${Array.from({ length: BANDS }, (_, i) => `<div id="b${i}" style="background:rgb(${bandColour(i).join(',')})"></div>`).join('')}`;
    const file = await service.client.capture({
      html,
      ...VIEW,
      format: 'gif',
      videoDuration: 1,
      videoFps: 6,
      scrollToSelector: '#b4',
      scrollEasing: 'ease-out',
      removeSelectors: ['#banner'],
    });
    expect(file.contentType).toBe('image/gif');
    const probe = await probeVideo(file.bytes, 'gif');
    expect(probe).toMatchObject({ codec: 'gif', width: 400, height: 300, frames: 6 });
    const offsets = await scrollOffsets(file.bytes, 'gif');
    expect(offsets[0]).toBe(0);
    expect(offsets.at(-1)).toBe(4 * BAND_PX);
    for (let i = 1; i < offsets.length; i++) expect(offsets[i]!).toBeGreaterThanOrEqual(offsets[i - 1]!);
  });

  it('refuses each bound up front with 400 naming the field, and charges nothing', async () => {
    const before = await credits();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ videoDuration: 61 }, 'videoDuration'],
      [{ videoDuration: 0.5 }, 'videoDuration'],
      // Past the synchronous maximum: POST /captures takes it (below).
      [{ videoDuration: 21 }, 'videoDuration'],
      [{ videoFps: 31 }, 'videoFps'],
      [{ videoFps: 12.5 }, 'videoFps'],
      [{ viewportWidth: 1920, viewportHeight: 1200 }, 'viewportHeight'],
      [{ viewportWidth: 1000, viewportHeight: 800, scaleFactor: 2 }, 'scaleFactor'],
      // A gif past its pixel budget (and so past the byte maximum).
      [{ format: 'gif', viewportWidth: 1280, viewportHeight: 720, videoFps: 30, videoDuration: 15 }, 'videoDuration'],
      [{ scrollEasing: 'bounce' }, 'scrollEasing'],
      [{ fullPage: true }, 'fullPage'],
      [{ clipSelector: '#b1' }, 'clipSelector'],
      [{ format: 'png', scrollToSelector: '#b1' }, 'scrollToSelector'],
    ];
    for (const [options, field] of cases) {
      const error = await daguerreError(service.client.capture({ html: '<p>x</p>', format: 'mp4', ...options } as never));
      expect(error.status, field).toBe(400);
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(
        (error.details as Array<{ field: string }>).map((d) => d.field),
        JSON.stringify(options),
      ).toContain(field);
    }
    expect(await credits()).toBe(before);
  });

  it('a video past VIDEO_MAX_BYTES fails with 400, uncharged, leaving no file behind; so does a scrollToSelector that matches nothing', async () => {
    const before = await credits();
    // Directories an earlier, killed run may have left are not this test's concern.
    const earlier = new Set(await leftoverVideoDirectories());
    const tooBig = await daguerreError(
      service.client.capture({
        url: `${fixtures.url}/noise.html`,
        viewportWidth: 480,
        viewportHeight: 360,
        format: 'gif',
        videoDuration: 1,
        videoFps: 10,
      }),
    );
    expect(tooBig.status).toBe(400);
    expect(tooBig.code).toBe('INVALID_INPUT');
    expect(tooBig.message).toContain('400000 bytes');
    const missing = await daguerreError(
      service.client.capture({ url: bandsUrl(), ...VIEW, format: 'mp4', videoDuration: 1, videoFps: 2, scrollToSelector: '#nothing' }),
    );
    expect(missing.status).toBe(400);
    expect(missing.message).toContain('scrollToSelector');
    expect(await credits()).toBe(before);
    expect((await leftoverVideoDirectories()).filter((name) => !earlier.has(name))).toEqual([]);
  });

  it('POST /captures takes a video longer than the synchronous maximum and charges one credit per started 10 s', async () => {
    const before = await credits();
    const accepted = await service.client.captureAsync({ url: bandsUrl(), ...VIEW, format: 'mp4', videoDuration: 21, videoFps: 1 });
    const done = await service.client.waitForCapture(accepted.jobId, { intervalMs: 250, timeoutMs: 120_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    const file = await service.client.getCaptureFile(accepted.jobId);
    const probe = await probeVideo(file.bytes, 'mp4');
    expect(probe).toMatchObject({ codec: 'h264', frames: 21 });
    expect(probe.duration).toBeCloseTo(21, 0);
    expect(before - (await credits())).toBe(3);
  });
});

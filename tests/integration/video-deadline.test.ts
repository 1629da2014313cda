import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaguerreError } from '../../client/src/index.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { probeVideo } from '../helpers/video.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A video's recording is not cut at its capture deadline when its frames come slowly: it goes on
 * while its pace says it ends within its longest allowance (docs/video.md, "Deadlines"). This
 * page spends 1.5 s of its main thread on every scroll, and each frame of the video after the first
 * scrolls it and waits for the frame that shows it: the 7 frames after the first take more than
 * 10.5 s whatever the machine, against a deadline of 6.6 s (CAPTURE_TIMEOUT_MS 4 s + 1 s of video +
 * 200 ms a frame). Before, such a video ended 504 at its deadline with its work lost, synchronous
 * or not; now it is delivered, late.
 */
const SLOW_FRAMES_PAGE = `<!doctype html><html><body style="margin:0">
<div style="height:4000px;background:linear-gradient(#264653,#e9c46a)"><h1 style="margin:0;font:40px sans-serif;color:#fff">Slow frames</h1></div>
<script>
  addEventListener('scroll', () => {
    const end = performance.now() + 1500;
    while (performance.now() < end);
  });
</script></body></html>`;

const SLOW_VIDEO = {
  html: SLOW_FRAMES_PAGE,
  viewportWidth: 320,
  viewportHeight: 240,
  format: 'mp4',
  videoDuration: 1,
  videoFps: 8,
} as const;
/** Each slow video takes about 15 s here. */
const SLOW_TEST_MS = 180_000;

describe('a video slower than its deadline', () => {
  let service: TestService;
  const prefix = `rs-test-video-deadline-${randomBytes(4).toString('hex')}`;
  const used = async () => (await service.client.usage()).credits.usedThisPeriod;

  beforeAll(async () => {
    service = await startTestService({
      credits: 100,
      env: { CAPTURE_TIMEOUT_MS: '4000', RATE_LIMIT_MAX: '1000', REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1' },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it(
    'synchronous: recorded past its deadline rather than cut, every frame, charged once',
    async () => {
      const before = await used();
      const file = await service.client.capture(SLOW_VIDEO).catch((error: unknown) => {
        throw new Error(`expected the video, got ${String(error)}`);
      });
      const probe = await probeVideo(file.bytes, 'mp4');
      expect(probe.frames).toBe(8);
      expect(Math.abs(probe.duration - 1)).toBeLessThan(0.005);
      expect((await used()) - before).toBe(1);
    },
    SLOW_TEST_MS,
  );

  it(
    'asynchronous: the job succeeds the same way',
    async () => {
      const before = await used();
      const accepted = await service.client.captureAsync(SLOW_VIDEO);
      const done = await service.client.waitForCapture(accepted.jobId, { intervalMs: 250, timeoutMs: 300_000 });
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      const probe = await probeVideo((await service.client.getCaptureFile(accepted.jobId)).bytes, 'mp4');
      expect(probe.frames).toBe(8);
      expect((await used()) - before).toBe(1);
    },
    SLOW_TEST_MS,
  );

  it('a synchronous video the instance, at the speed it measured, cannot end even within its longest allowance is refused up front, uncharged', async () => {
    // 600 frames of 0.9 Mpx: about 90 s on an instance of the model's speed, within the 144 s of the
    // longest synchronous allowance (the bound its recording never passes); at the speed the slow
    // recordings above taught this instance (at least 4.9 times the model's), far past it.
    const before = await used();
    const error = await service.client
      .capture({ html: '<h1>long</h1>', viewportWidth: 1280, viewportHeight: 720, format: 'mp4', videoDuration: 20, videoFps: 30 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(DaguerreError);
    expect((error as DaguerreError).status).toBe(503);
    expect((error as DaguerreError).message).toMatch(
      /This video would take about \d+ s here \(600 frames of 0.9 Mpx at this instance's measured speed\)/,
    );
    expect(Number((error as DaguerreError).headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await used()) - before).toBe(0);
  });
});

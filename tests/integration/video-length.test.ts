import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFrames, probeVideo } from '../helpers/video.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * A video has round(videoDuration × videoFps) frames and lasts frames ÷ videoFps (docs/video.md),
 * read back with ffprobe. Before, a 1 s video at 1 fps had two frames and lasted 2 s (at least two
 * frames were taken), a one-frame GIF would have lasted 0.1 s (ffmpeg's default last delay) and a
 * 3 s GIF at 12 fps 3.01 s (its last frame repeated the delay before it).
 */
const BANDS = ['rgb(230,57,70)', 'rgb(42,157,143)', 'rgb(38,70,83)', 'rgb(233,196,106)'];
const PAGE = `<style>body{margin:0}div{height:300px}</style>${BANDS.map((colour) => `<div style="background:${colour}"></div>`).join('')}`;
const VIEW = { viewportWidth: 320, viewportHeight: 240 };

describe('video length and frames as asked', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ credits: 100, env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
  });

  for (const format of ['mp4', 'webm', 'gif'] as const) {
    it(`${format}: 1 s at 1 fps is one frame, 1.00 s long, showing the top of the page`, async () => {
      const file = await service.client.capture({ html: PAGE, ...VIEW, format, videoDuration: 1, videoFps: 1 });
      const probe = await probeVideo(file.bytes, format);
      expect(probe.frames).toBe(1);
      expect(Math.abs(probe.duration - 1)).toBeLessThan(0.005);
      const frames = await decodeFrames(file.bytes, format, VIEW.viewportWidth, VIEW.viewportHeight);
      const [red, green, blue] = frames.pixel(0, 160, 120);
      // The first band (230,57,70), within the codecs' error.
      expect(Math.abs(red - 230) + Math.abs(green - 57) + Math.abs(blue - 70)).toBeLessThan(40);
    });
  }

  it('gif: 3 s at 12 fps is 36 frames, 3.00 s long (the last delay makes up the length)', async () => {
    const file = await service.client.capture({ html: PAGE, ...VIEW, format: 'gif', videoDuration: 3, videoFps: 12 });
    const probe = await probeVideo(file.bytes, 'gif');
    expect(probe.frames).toBe(36);
    expect(Math.abs(probe.duration - 3)).toBeLessThan(0.005);
  });

  it('mp4 and webm: 2 s at 7 fps is 14 frames, 2.00 s long', async () => {
    for (const format of ['mp4', 'webm'] as const) {
      const file = await service.client.capture({ html: PAGE, ...VIEW, format, videoDuration: 2, videoFps: 7 });
      const probe = await probeVideo(file.bytes, format);
      expect(probe.frames, format).toBe(14);
      expect(Math.abs(probe.duration - 2), format).toBeLessThan(0.005);
    }
  });
});

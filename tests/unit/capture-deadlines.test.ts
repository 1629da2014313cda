import { CaptureQuerySchema, videoStretchMs } from '@daguerre/contract';
import { describe, expect, it } from 'vitest';
import { gifFinalDelay } from '../../server/src/capture/output/video-encoder.js';
import { INSPECTION_GRACE_MS } from '../../server/src/capture/insight/late-inspection.js';
import { captureDeadlines } from '../../server/src/services/capture-deadlines.js';

const options = (query: Record<string, string>) => CaptureQuerySchema.parse({ html: '<p>x</p>', ...query });

describe('capture deadlines (docs/video.md, "Deadlines")', () => {
  it('an image: one deadline, its budget, and the reservation outlives it by the grace of the reading after the file', () => {
    const deadlines = captureDeadlines(30_000, options({ delay: '2000' }), { started: 1_000, async: false });
    expect(deadlines).toEqual({ budgetMs: 32_000, page: 33_000, limit: 33_000, reservation: 33_000 + INSPECTION_GRACE_MS });
  });

  it('a synchronous video: its page time as before, its recording up to the allowance of a 20 s video at 30 fps', () => {
    // 5 s at 24 fps: 5 s + 120 × 200 ms = 29 s on top of CAPTURE_TIMEOUT_MS.
    const video = options({ format: 'mp4', videoDuration: '5', videoFps: '24' });
    const deadlines = captureDeadlines(30_000, video, { started: 0, async: false });
    expect(deadlines.page).toBe(59_000);
    expect(deadlines.limit).toBe(30_000 + 140_000);
    // Having waited for its lane place, its page time counts from there, within the same limit.
    expect(captureDeadlines(30_000, video, { started: 0, placed: 20_000, async: false }).page).toBe(79_000);
    expect(captureDeadlines(30_000, video, { started: 0, placed: 150_000, async: false }).page).toBe(170_000);
  });

  it('an async video: up to the allowance of a 60 s video at 30 fps; the longest ones have no stretch left', () => {
    const video = options({ format: 'gif', videoDuration: '3', videoFps: '12', viewportWidth: '640', viewportHeight: '360' });
    expect(captureDeadlines(10_000, video, { started: 0, async: true }).limit).toBe(10_000 + 420_000);
    expect(videoStretchMs(video, true)).toBe(420_000 - (3_000 + 36 * 200));
    expect(videoStretchMs({ format: 'mp4', videoDuration: 20, videoFps: 30 }, false)).toBe(0);
    expect(videoStretchMs({ format: 'png' }, true)).toBe(0);
  });
});

describe("a GIF's last delay", () => {
  it('makes its length frames ÷ fps to the centisecond (the values ffprobe confirmed for these cases)', () => {
    // 36 frames at 12 fps: the frames before the last start at 0 … 292 cs, so 8 cs more make 3.00 s.
    expect(gifFinalDelay(36, 12)).toBe(8);
    expect(gifFinalDelay(120, 24)).toBe(4);
    expect(gifFinalDelay(7, 7)).toBe(14);
    expect(gifFinalDelay(30, 30)).toBe(3);
    // One frame alone: shown for 1 s at 1 fps (ffmpeg's default would be 0.1 s).
    expect(gifFinalDelay(1, 1)).toBe(100);
  });
});

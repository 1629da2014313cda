import { resolveDevice, videoFrameCount, type CaptureOptions } from '@daguerre/contract';

/**
 * How long a video takes to record on this instance, learnt from the videos it recorded. A frame
 * is a screenshot of the viewport streamed into ffmpeg: its cost has a fixed part (the DevTools
 * round trip, the JPEG) and a part that grows with the frame's pixels (painting, encoding). The
 * model is `frames × speed × (FIXED + PER_MEGAPIXEL × megapixels)`, never less than the video's own
 * length (frames are taken at their moment, not before), plus the page's load. `speed` starts at 1
 * (figures measured on two busy cores: ~230 ms a 1920×1080 frame, ~120 ms at 1280×720) and follows
 * each recording that ran slower than real time.
 */
const FIXED_FRAME_MS = 60;
const PER_MEGAPIXEL_MS = 90;
/** Loading the page before the first frame and finishing the file after the last. */
const OVERHEAD_MS = 3_000;
/** Weight of the newest recording in the running figure. */
const LEARNING_RATE = 0.3;

export interface VideoShape {
  frames: number;
  /** Pixels of a frame (viewport × scaleFactor²). */
  framePixels: number;
  durationMs: number;
}

export function videoShape(
  options: Pick<CaptureOptions, 'videoDuration' | 'videoFps' | 'device' | 'viewportWidth' | 'viewportHeight' | 'scaleFactor'>,
): VideoShape {
  const preset = resolveDevice(options.device);
  const scale = options.scaleFactor ?? preset.scale;
  const width = Math.round((options.viewportWidth ?? preset.width) * scale);
  const height = Math.round((options.viewportHeight ?? preset.height) * scale);
  return { frames: videoFrameCount(options), framePixels: width * height, durationMs: options.videoDuration * 1000 };
}

export class VideoEstimate {
  private speed = 1;

  /** The time a recording of this shape is expected to take here, page load included. */
  expectedMs(shape: VideoShape): number {
    return Math.max(shape.durationMs, shape.frames * this.frameMs(shape)) + OVERHEAD_MS;
  }

  /** A recording ended after `elapsedMs` (from its start to its file): the figure follows it when it was slower than real time. */
  learn(shape: VideoShape, elapsedMs: number): void {
    const recordingMs = elapsedMs - OVERHEAD_MS;
    // Paced by the clock, a recording says only that frames took no longer than their interval.
    if (recordingMs <= shape.durationMs * 1.05) return;
    const observed = recordingMs / shape.frames / this.modelFrameMs(shape);
    this.speed = Math.min(10, Math.max(0.2, (1 - LEARNING_RATE) * this.speed + LEARNING_RATE * observed));
  }

  /**
   * A recording ran out of its deadline after `elapsedMs`, unfinished: it would have taken longer,
   * by how much is unknown. The figure goes to a quarter above what it took, so that the same video
   * is expected to outlast the same deadline and a synchronous one is refused up front, not held
   * until it times out again.
   */
  learnTooSlow(shape: VideoShape, elapsedMs: number): void {
    const atLeast = (elapsedMs * 1.25 - OVERHEAD_MS) / shape.frames / this.modelFrameMs(shape);
    this.speed = Math.min(10, Math.max(this.speed, atLeast));
  }

  private frameMs(shape: VideoShape): number {
    return this.speed * this.modelFrameMs(shape);
  }

  private modelFrameMs(shape: VideoShape): number {
    return FIXED_FRAME_MS + (PER_MEGAPIXEL_MS * shape.framePixels) / 1e6;
  }
}

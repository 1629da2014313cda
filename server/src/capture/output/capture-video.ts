import { videoFrameCount, type CaptureOptions, type VideoFormat } from '@daguerre/contract';
import type { Slot } from '../pool/context-pool.js';
import type { RenderResult } from './render-result.js';
import { type GuardedRequest } from '../page/stage-guard.js';
import { CaptureTimeoutError, ClientGoneError } from '../capture-error.js';
import { VideoEncoder, type VideoEncoderSettings } from './video-encoder.js';
import { ScreencastFrames } from './video-frames.js';
import { prepareScroll, scrollPosition, scrollTo } from './video-scroll.js';
import { ignoreBecause } from '../../ignore-error.js';

export type VideoSettings = Pick<VideoEncoderSettings, 'ffmpegPath' | 'maxBytes'>;

export interface VideoRequest extends GuardedRequest {
  /** How far the recording may go on past `deadline` (capture-deadlines.ts); absent: not past it. */
  recordingDeadline?: number | undefined;
}

/** The recording's own bounds: up to its recording deadline, which the stages before it never get. */
export const recordingWindow = <T extends VideoRequest>(request: T): T => ({
  ...request,
  deadline: request.recordingDeadline ?? request.deadline,
});

/** The stage a video's recording times out in (it had until its recording deadline, not the capture's). */
export const RECORDING_STAGE = 'recording the video';
export const isRecordingTimeout = (error: unknown) => error instanceof CaptureTimeoutError && error.stage.startsWith(RECORDING_STAGE);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The video capture mode (docs/video.md): after the same waits, cleanup and page control as a
 * screenshot, the page is scrolled from the top to its end over videoDuration with scrollEasing, and
 * each frame is the viewport at its exact scroll position, taken from Chromium's screencast
 * (video-frames.ts) and streamed into ffmpeg (video-encoder.ts). Frames are taken no earlier than
 * their moment in the video, so the page's own animations play at their speed; a slower machine
 * makes the recording slower, never the video shorter: it always has videoDuration × videoFps frames.
 *
 * A busy instance makes it slower than its deadline allows: rather than being cut there, with its
 * work lost, the recording goes on past the deadline while its own pace says that it ends by its
 * recording deadline, and stops at once when it cannot (docs/video.md, "Deadlines").
 */
export async function captureVideo(
  slot: Slot,
  options: CaptureOptions,
  request: VideoRequest,
  settings: VideoSettings = {},
): Promise<RenderResult> {
  const { page } = slot;
  const fps = options.videoFps;
  const frames = videoFrameCount(options);
  const followBottom = options.scrollToSelector === undefined;
  let distance = await prepareScroll(page, options.scrollToSelector);
  const encoder = await VideoEncoder.start({ format: options.format as VideoFormat, fps, frames, ...settings });
  let screencast: ScreencastFrames | undefined;
  try {
    screencast = await ScreencastFrames.start(page);
    const started = Date.now();
    let previous = 0;
    let shown: number | undefined;
    // The frame before is written while the next is scrolled to and drawn (two frames in memory at most).
    let writing: Promise<void> = Promise.resolve();
    const limit = request.recordingDeadline ?? request.deadline;
    for (let index = 0; index < frames; index++) {
      if (request.signal.aborted) throw new ClientGoneError();
      const now = Date.now();
      // Each frame at its interval at best; the frames so far say how long the rest will take.
      const pace = Math.max(1000 / fps, index > 0 ? (now - started) / index : 0);
      if (now >= request.deadline && now + (frames - index) * pace > limit) {
        throw new CaptureTimeoutError(
          `${RECORDING_STAGE}: at ${Math.round(pace)} ms a frame its ${frames - index} frames left would end past its longest allowance`,
        );
      }
      const wait = started + (index * 1000) / fps - Date.now();
      if (wait > 0) await sleep(wait);
      // Never backwards, even when the page grew under the scroll.
      const top = Math.max(previous, scrollPosition(options.scrollEasing, index, frames, distance));
      screencast.arm();
      const position = await scrollTo(page, top);
      if (followBottom) distance = Math.max(distance, position.bottom);
      previous = top;
      // A page that did not move draws nothing new unless it animates (the first frame: it was put at
      // the top before), so its frame is a screenshot rather than a wait for a frame that may not come.
      const jpeg =
        shown === undefined || position.top === shown ? await screencast.screenshotNow() : await screencast.frameAt(position.top);
      shown = position.top;
      await writing;
      writing = encoder.write(jpeg);
      // Its failure (ffmpeg gone, the byte maximum) ends the loop at the next frame, or below.
      writing.catch(ignoreBecause('awaited before the next frame is written, or after the loop'));
    }
    await writing;
    await screencast.stop();
    const video = await encoder.finish();
    return { buffer: video.buffer, mime: video.mime, extension: video.extension };
  } catch (error) {
    await screencast?.stop();
    await encoder.abort();
    throw error;
  }
}

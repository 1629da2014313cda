import { z } from 'zod';
import { resolveDevice, type DeviceName } from './devices.js';
import { enumParam, numberParam, stringParam } from './params.js';
import { LIMITS } from './limits.js';

/**
 * Scrolling video (docs/video.md): `format=mp4|webm|gif` records the page scrolling from the top to
 * the bottom (or to `scrollToSelector`) over `videoDuration` seconds with `scrollEasing`, at
 * `videoFps`, in frames the size of the viewport (× scaleFactor). Merged into the capture formats
 * by capture-formats.ts (and its fields into capture-output-fields.ts); every rule and bound of
 * video lives here.
 */
export const VIDEO_FORMATS = ['mp4', 'webm', 'gif'] as const;
export type VideoFormat = (typeof VIDEO_FORMATS)[number];
export const VIDEO_MIME_TYPES: Record<VideoFormat, string> = { mp4: 'video/mp4', webm: 'video/webm', gif: 'image/gif' };
export const SCROLL_EASINGS = ['linear', 'ease-in', 'ease-out', 'ease-in-out'] as const;
export type ScrollEasing = (typeof SCROLL_EASINGS)[number];

/** Documented maxima of a video (docs/video.md). A request past any of them is refused with 400 before any work. */
export const VIDEO_LIMITS = {
  durationMinSeconds: 1,
  durationMaxSeconds: 60,
  /** GET/POST /capture answer the file in the request; longer videos go through POST /captures (async). */
  syncMaxDurationSeconds: 20,
  fpsMin: 1,
  fpsMax: 30,
  /** Frame size in device pixels (viewport × scaleFactor): at most 1920×1080 worth of pixels, and 1920 px per side. */
  maxFramePixels: 1920 * 1080,
  maxFrameSidePx: 1920,
  /** Largest file; mp4 and webm are encoded with a capped bit rate that keeps every allowed video below it. */
  maxOutputBytes: 64 * 1024 * 1024,
  /** Cap of the mp4/webm bit rate (bits per second): 60 s × 8 Mbit/s = 60 MB < maxOutputBytes. */
  maxBitrate: 8_000_000,
  /**
   * A GIF has no bit-rate control: its size follows frames × pixels. Frames × frame pixels must stay
   * within this budget (e.g. 1280×720 at 10 fps for 30 s); past maxOutputBytes the capture fails, uncharged.
   */
  gifMaxPixelFrames: 1280 * 720 * 10 * 30,
  /** Credits: one capture's worth per started block of this many seconds. */
  creditSeconds: 10,
} as const;

export const videoFields = {
  videoDuration: numberParam(
    'videoDuration',
    { min: VIDEO_LIMITS.durationMinSeconds, max: VIDEO_LIMITS.durationMaxSeconds, unit: 'seconds' },
    5,
    `Video formats (mp4, webm, gif): length of the video in seconds, the time the scroll takes. Up to ${VIDEO_LIMITS.syncMaxDurationSeconds} s on /capture, up to ${VIDEO_LIMITS.durationMaxSeconds} s on POST /captures. Costs one capture's credits per started ${VIDEO_LIMITS.creditSeconds} s.`,
  ),
  videoFps: numberParam(
    'videoFps',
    { min: VIDEO_LIMITS.fpsMin, max: VIDEO_LIMITS.fpsMax, unit: 'frames per second' },
    24,
    'Video formats: frames per second (whole number).',
  ),
  scrollEasing: enumParam(
    'scrollEasing',
    SCROLL_EASINGS,
    'ease-in-out',
    'Video formats: how the scroll speeds up and slows down: linear, ease-in, ease-out or ease-in-out.',
  ),
  scrollToSelector: stringParam(
    'scrollToSelector',
    LIMITS.selectorMaxLength,
    'Video formats: CSS selector of the element the video scrolls to (its top at the top of the viewport, as far as the page allows). Default: the bottom of the page. No match: 400 INVALID_INPUT.',
  ),
};

export const isVideoFormat = (format: string): format is VideoFormat => (VIDEO_FORMATS as readonly string[]).includes(format);

/**
 * Frames of a video: duration × fps rounded, at least one. The video lasts frames ÷ fps: exactly
 * videoDuration whenever videoDuration × videoFps is whole (a 1 s video at 1 fps is one frame, 1 s long).
 */
export const videoFrameCount = (options: { videoDuration: number; videoFps: number }) =>
  Math.max(1, Math.round(options.videoDuration * options.videoFps));

/** Credits of a capture: a video costs `perCapture` per started VIDEO_LIMITS.creditSeconds, anything else `perCapture`. */
export function captureCredits(options: { format: string; videoDuration?: number }, perCapture: number): number {
  if (!isVideoFormat(options.format)) return perCapture;
  return perCapture * Math.max(1, Math.ceil((options.videoDuration ?? 5) / VIDEO_LIMITS.creditSeconds));
}

/**
 * Time a video may take beyond an image capture: its own length (frames are taken in real time)
 * plus an allowance per frame for taking and encoding it on a busy machine.
 */
export const VIDEO_FRAME_ALLOWANCE_MS = 200;
export function videoWaitMs(options: { format?: string | undefined; videoDuration?: number; videoFps?: number }): number {
  if (options.format === undefined || !isVideoFormat(options.format)) return 0;
  const duration = options.videoDuration ?? 5;
  return duration * 1000 + videoFrameCount({ videoDuration: duration, videoFps: options.videoFps ?? 24 }) * VIDEO_FRAME_ALLOWANCE_MS;
}
export const MAX_VIDEO_WAIT_MS = VIDEO_LIMITS.durationMaxSeconds * 1000 * (1 + (VIDEO_LIMITS.fpsMax * VIDEO_FRAME_ALLOWANCE_MS) / 1000);
/** The same for the longest video GET and POST /capture take (20 s at 30 fps: 140 s). */
export const SYNC_VIDEO_MAX_WAIT_MS =
  VIDEO_LIMITS.syncMaxDurationSeconds * 1000 * (1 + (VIDEO_LIMITS.fpsMax * VIDEO_FRAME_ALLOWANCE_MS) / 1000);

/**
 * How far a video's recording may run past its capture deadline when its frames come more slowly
 * than that deadline allows (a busy instance, a heavy page): up to the allowance of the longest video
 * its route takes, CAPTURE_TIMEOUT_MS + 140 s on /capture and + 420 s on POST /captures, so that
 * under load a video takes longer rather than being cut (docs/video.md, "Deadlines").
 */
export function videoStretchMs(
  options: { format?: string | undefined; videoDuration?: number; videoFps?: number },
  async: boolean,
): number {
  if (options.format === undefined || !isVideoFormat(options.format)) return 0;
  return Math.max(0, (async ? MAX_VIDEO_WAIT_MS : SYNC_VIDEO_MAX_WAIT_MS) - videoWaitMs(options));
}

/** Options that make no sense in a video, with the reason. */
const NOT_FOR_VIDEO = {
  fullPage: 'a video shows the viewport while it scrolls',
  clipSelector: 'a video shows the whole viewport',
  scrollIntoView: 'a video scrolls from the top; use scrollToSelector for where it ends',
  omitBackground: 'video frames have no transparency',
  openaiPrompt: 'AI analysis reads images, not videos',
} as const;

type VideoCheckable = {
  format: string;
  videoDuration: number;
  videoFps: number;
  scrollToSelector?: string | undefined;
  device: DeviceName;
  viewportWidth?: number | undefined;
  viewportHeight?: number | undefined;
  scaleFactor?: number | undefined;
} & Partial<Record<keyof typeof NOT_FOR_VIDEO, unknown>>;

function issue(ctx: z.RefinementCtx, field: string, message: string) {
  ctx.addIssue({ code: z.ZodIssueCode.custom, path: [field], message });
}

/** The bounds of a video (any mode), checked before any work: each refusal names the field. */
export function checkVideoRules(options: VideoCheckable, ctx: z.RefinementCtx): void {
  if (!isVideoFormat(options.format)) {
    if (options.scrollToSelector !== undefined)
      issue(ctx, 'scrollToSelector', 'scrollToSelector applies to the video formats (mp4, webm, gif) only');
    return;
  }
  for (const [field, why] of Object.entries(NOT_FOR_VIDEO)) {
    const value = options[field as keyof typeof NOT_FOR_VIDEO];
    if (value !== undefined && value !== false) issue(ctx, field, `${field} does not apply to format ${options.format}: ${why}`);
  }
  if (!Number.isInteger(options.videoFps))
    issue(ctx, 'videoFps', `videoFps must be a whole number from ${VIDEO_LIMITS.fpsMin} to ${VIDEO_LIMITS.fpsMax}`);
  const preset = resolveDevice(options.device);
  const scale = options.scaleFactor ?? preset.scale;
  const width = Math.round((options.viewportWidth ?? preset.width) * scale);
  const height = Math.round((options.viewportHeight ?? preset.height) * scale);
  if (width * height > VIDEO_LIMITS.maxFramePixels || width > VIDEO_LIMITS.maxFrameSidePx || height > VIDEO_LIMITS.maxFrameSidePx) {
    const message = `video frames (viewport × scaleFactor) are ${width}×${height} pixels; at most ${VIDEO_LIMITS.maxFramePixels} pixels (1920×1080) and ${VIDEO_LIMITS.maxFrameSidePx} px per side are allowed: lower viewportWidth, viewportHeight or scaleFactor`;
    issue(ctx, 'viewportWidth', message);
    issue(ctx, 'viewportHeight', message);
    if (scale !== 1) issue(ctx, 'scaleFactor', message);
    return;
  }
  if (options.format === 'gif') {
    const pixelFrames = width * height * videoFrameCount(options);
    if (pixelFrames > VIDEO_LIMITS.gifMaxPixelFrames) {
      issue(
        ctx,
        'videoDuration',
        `a gif of ${width}×${height} pixels × ${videoFrameCount(options)} frames would pass the gif budget of ${VIDEO_LIMITS.gifMaxPixelFrames} pixel-frames (e.g. 1280×720 at 10 fps for 30 s) and the ${VIDEO_LIMITS.maxOutputBytes}-byte maximum: shorten videoDuration, lower videoFps or the viewport, or use mp4/webm`,
      );
    }
  }
}

/** GET and POST /capture answer within the request: a long video goes through POST /captures. */
export function checkSyncVideoRules(options: { format: string; videoDuration: number }, ctx: z.RefinementCtx): void {
  if (isVideoFormat(options.format) && options.videoDuration > VIDEO_LIMITS.syncMaxDurationSeconds) {
    issue(
      ctx,
      'videoDuration',
      `videoDuration on /capture is at most ${VIDEO_LIMITS.syncMaxDurationSeconds} seconds; longer videos (up to ${VIDEO_LIMITS.durationMaxSeconds} s) go through POST /captures`,
    );
  }
}

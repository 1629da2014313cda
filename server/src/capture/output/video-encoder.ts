import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { VIDEO_LIMITS, type VideoFormat } from '@daguerre/contract';
import { CaptureError } from '../capture-error.js';
import { ownerTag, removeDeadOwnersProfiles } from '../browser/profile-owner.js';

/**
 * The video encoder: one ffmpeg child per video, fed JPEG frames one at a time through its stdin
 * (an image2pipe stream), writing into a private temporary file. Only the frame being written is
 * held in memory; backpressure on the pipe paces the capture to the encoder. ffmpeg's own `-fs`
 * stops the output at the byte maximum, which this module turns into a refusal.
 */

/**
 * The encoder's temporary folders carry their process in their name (`daguerre-video-<pid>-<start
 * ticks>-…`, profile-owner.ts), as Chromium's profiles do: a process killed while it encodes cannot
 * remove its folder, and the next process to start on the machine removes the folders whose owner
 * is gone, never a live process's (several may share the temporary directory).
 */
const FOLDER_PREFIX = 'daguerre-video-';

/** At start (serve and worker): removes the folders of processes that died while they encoded. */
export function removeDeadInstancesVideoFolders(): string[] {
  return removeDeadOwnersProfiles(tmpdir(), FOLDER_PREFIX);
}

/** Added to the service's own nice value for ffmpeg. */
export const ENCODER_NICENESS = 5;

/**
 * ffmpeg runs through util-linux's `setpriv` (Essential in Debian, and what starts Chromium too) and
 * coreutils' `nice`, which then exec it under the same pid:
 * - `--pdeathsig KILL`: the kernel kills ffmpeg when the thread that forked it ends. Node's spawn forks
 *   on the event-loop thread, which lives as long as the process, so ffmpeg ends with the service
 *   even on SIGKILL, instead of encoding on until it notices that its input has closed.
 * - `nice -n 5`: encoding yields the CPU to the captures of every organization (Chromium runs at the
 *   service's priority). Set before ffmpeg starts, so that every thread it creates inherits it
 *   (a nice value is per thread on Linux: os.setPriority after the spawn would miss threads already made).
 */
function encoderCommand(ffmpegPath: string, args: string[]): [string, string[]] {
  return ['setpriv', ['--pdeathsig', 'KILL', '--', 'nice', '-n', String(ENCODER_NICENESS), ffmpegPath, ...args]];
}

export interface VideoEncoderSettings {
  format: VideoFormat;
  fps: number;
  /** Frames the video will have: a GIF's last frame is shown for what makes its length frames ÷ fps. */
  frames: number;
  /** Largest output, bytes (VIDEO_LIMITS.maxOutputBytes unless a test asks for less). */
  maxBytes?: number;
  /** The ffmpeg binary (FFMPEG_PATH). */
  ffmpegPath?: string;
}

export interface EncodedVideo {
  buffer: Buffer;
  mime: string;
  extension: VideoFormat;
}

/** x264 and VP9 need even frame sides for yuv420p: an odd pixel row or column is cropped. */
const EVEN = 'crop=trunc(iw/2)*2:trunc(ih/2)*2';

/**
 * Per-frame palettes (stats_mode=single, new=1) keep the GIF streaming: a palette for the whole
 * video would make ffmpeg hold every frame until the last one arrived.
 */
const GIF_FILTER = 'split[a][b];[a]palettegen=stats_mode=single[p];[b][p]paletteuse=new=1:dither=bayer:bayer_scale=4';

/**
 * A GIF's frame delays are whole centiseconds, each the rounded distance to the next frame; the last
 * frame has none to measure and ffmpeg repeats the one before (one frame alone: 0.1 s). Its delay is
 * set to what makes the whole GIF last frames ÷ fps, to the centisecond (1 s at 1 fps: 1 frame, 1.00 s).
 */
export function gifFinalDelay(frames: number, fps: number): number {
  return Math.round((100 * frames) / fps) - Math.round((100 * (frames - 1)) / fps);
}

function outputArguments(format: VideoFormat, fps: number, frames: number): string[] {
  const rate = String(VIDEO_LIMITS.maxBitrate);
  switch (format) {
    case 'mp4':
      return [
        '-vf',
        EVEN,
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-crf',
        '23',
        '-maxrate',
        rate,
        '-bufsize',
        rate,
        '-pix_fmt',
        'yuv420p',
        '-movflags',
        '+faststart',
        '-r',
        String(fps),
        '-f',
        'mp4',
      ];
    case 'webm':
      // Constrained quality: crf with -b:v as the ceiling; realtime speed keeps VP9 near real time on two cores;
      // no look-ahead (lag-in-frames 0): 25 buffered frames cost ~55 MiB at 720p and buy little for a scroll.
      return [
        '-vf',
        EVEN,
        '-c:v',
        'libvpx-vp9',
        '-deadline',
        'realtime',
        '-cpu-used',
        '8',
        '-row-mt',
        '1',
        '-lag-in-frames',
        '0',
        '-crf',
        '33',
        '-b:v',
        rate,
        '-pix_fmt',
        'yuv420p',
        '-r',
        String(fps),
        '-f',
        'webm',
      ];
    case 'gif':
      return ['-filter_complex', GIF_FILTER, '-loop', '0', '-final_delay', String(gifFinalDelay(frames, fps)), '-f', 'gif'];
  }
}

const MIME: Record<VideoFormat, string> = { mp4: 'video/mp4', webm: 'video/webm', gif: 'image/gif' };

export class VideoTooLargeError extends CaptureError {
  constructor(maxBytes: number) {
    super(
      'video-too-large',
      `The video passed the maximum output size of ${maxBytes} bytes; shorten videoDuration, lower videoFps or the viewport (or use mp4/webm for a gif). Nothing was charged.`,
      {
        details: [{ field: 'videoDuration', message: `the encoded video passed ${maxBytes} bytes`, value: null }],
      },
    );
  }
}

export class VideoEncoder {
  private frames = 0;
  private stderrTail = '';
  private readonly exited: Promise<number | null>;
  private spawnError: Error | undefined;

  private constructor(
    private readonly child: ChildProcessByStdio<Writable, null, Readable>,
    private readonly directory: string,
    private readonly output: string,
    private readonly settings: Required<VideoEncoderSettings>,
  ) {
    child.stderr.setEncoding('utf8');
    // The last lines of ffmpeg's complaints, for the operator's log only.
    child.stderr.on('data', (chunk: string) => (this.stderrTail = (this.stderrTail + chunk).slice(-2_000)));
    // A write into a dead ffmpeg fails through write()'s callback; this only keeps the stream from throwing.
    child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      child.once('error', (error) => {
        this.spawnError = error;
        resolve(null);
      });
      child.once('close', (code) => resolve(code));
    });
  }

  static async start(settings: VideoEncoderSettings): Promise<VideoEncoder> {
    const full: Required<VideoEncoderSettings> = { maxBytes: VIDEO_LIMITS.maxOutputBytes, ffmpegPath: 'ffmpeg', ...settings };
    const directory = await mkdtemp(join(tmpdir(), `${FOLDER_PREFIX}${ownerTag()}`));
    const output = join(directory, `video.${full.format}`);
    const args = [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'image2pipe',
      '-c:v',
      'mjpeg',
      '-framerate',
      String(full.fps),
      '-i',
      'pipe:0',
      ...outputArguments(full.format, full.fps, full.frames),
      '-threads',
      '2',
      '-fs',
      String(full.maxBytes),
      '-y',
      output,
    ];
    // No environment of the service's (secrets) reaches the encoder.
    const [command, commandArgs] = encoderCommand(full.ffmpegPath, args);
    const child = spawn(command, commandArgs, { stdio: ['pipe', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    return new VideoEncoder(child, directory, output, full);
  }

  get frameCount(): number {
    return this.frames;
  }

  /** Writes one frame; resolves once ffmpeg has taken it (backpressure), so at most one frame waits in memory. */
  async write(jpeg: Uint8Array): Promise<void> {
    if (this.spawnError) throw this.encoderFailed();
    const stdin = this.child.stdin;
    await new Promise<void>((resolve, reject) => {
      const accepted = stdin.write(jpeg, (error) => (error ? reject(this.encoderFailed(error)) : undefined));
      if (accepted) resolve();
      else stdin.once('drain', resolve);
      // ffmpeg gone (stopped at -fs, crashed): no drain will come.
      // exited only ever resolves (a spawn error resolves it with null).
      void this.exited.then(() => resolve());
    });
    if (this.child.exitCode !== null || this.spawnError) {
      await this.exited;
      if (await this.reachedLimit()) throw new VideoTooLargeError(this.settings.maxBytes);
      throw this.encoderFailed();
    }
    this.frames += 1;
  }

  /** Ends the stream, waits for ffmpeg and returns the file; the temporary directory is removed either way. */
  async finish(): Promise<EncodedVideo> {
    try {
      this.child.stdin.end();
      const code = await this.exited;
      if (await this.reachedLimit()) throw new VideoTooLargeError(this.settings.maxBytes);
      if (code !== 0) throw this.encoderFailed();
      const buffer = await readFile(this.output);
      if (buffer.length === 0) throw this.encoderFailed();
      return { buffer, mime: MIME[this.settings.format], extension: this.settings.format };
    } finally {
      await this.dispose();
    }
  }

  /** Stops ffmpeg and removes its file (a failed or abandoned capture leaves nothing behind). */
  async abort(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
    await this.dispose();
  }

  private async dispose(): Promise<void> {
    await rm(this.directory, { recursive: true, force: true });
  }

  private async reachedLimit(): Promise<boolean> {
    const size = await stat(this.output).then(
      (s) => s.size,
      () => 0,
    );
    // -fs stops the output once a write has passed the limit.
    return size >= this.settings.maxBytes;
  }

  private encoderFailed(cause?: unknown): CaptureError {
    return new CaptureError('encode-failed', 'The video could not be encoded; nothing was charged', {
      logDetail: {
        spawnError: this.spawnError?.message,
        stderr: this.stderrTail,
        cause,
        hint: 'are ffmpeg (FFMPEG_PATH), setpriv (util-linux) and nice (coreutils) installed?',
      },
    });
  }
}

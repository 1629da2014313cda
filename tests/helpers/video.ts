import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface VideoProbe {
  codec: string;
  width: number;
  height: number;
  /** Seconds, from the container. */
  duration: number;
  /** Frames actually decoded (ffprobe -count_frames). */
  frames: number;
}

/** A video's bytes in a temporary file for ffprobe/ffmpeg, removed afterwards. */
async function withFile<T>(bytes: Uint8Array, extension: string, use: (path: string) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), 'daguerre-test-video-'));
  const path = join(directory, `video.${extension}`);
  try {
    await writeFile(path, bytes);
    return await use(path);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

export async function probeVideo(bytes: Uint8Array, extension: string): Promise<VideoProbe> {
  return withFile(bytes, extension, async (path) => {
    const { stdout } = await run('ffprobe', [
      '-v',
      'error',
      '-count_frames',
      '-select_streams',
      'v:0',
      '-show_entries',
      'stream=codec_name,width,height,nb_read_frames:format=duration',
      '-of',
      'json',
      path,
    ]);
    const parsed = JSON.parse(stdout) as {
      streams: Array<{ codec_name: string; width: number; height: number; nb_read_frames: string }>;
      format: { duration: string };
    };
    const stream = parsed.streams[0]!;
    return {
      codec: stream.codec_name,
      width: stream.width,
      height: stream.height,
      duration: Number(parsed.format.duration),
      frames: Number(stream.nb_read_frames),
    };
  });
}

/** Every frame as RGB (24-bit) pixels: `pixel(frame, x, y)`. Small test videos only. */
export async function decodeFrames(bytes: Uint8Array, extension: string, width: number, height: number) {
  const raw = await withFile(bytes, extension, async (path) => {
    const { stdout } = await run('ffmpeg', ['-v', 'error', '-i', path, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], {
      encoding: 'buffer',
      maxBuffer: 256 * 1024 * 1024,
    });
    return stdout as unknown as Buffer;
  });
  const frameBytes = width * height * 3;
  return {
    count: Math.floor(raw.length / frameBytes),
    pixel(frame: number, x: number, y: number): [number, number, number] {
      const at = frame * frameBytes + (y * width + x) * 3;
      return [raw[at]!, raw[at + 1]!, raw[at + 2]!];
    },
  };
}

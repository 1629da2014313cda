/**
 * Scrolling video (docs/video.md): wall time per second of video and the peak memory of each ffmpeg
 * encoding, for mp4, webm and gif of one inline page, through a `daguerre serve` on SQLite.
 * ffmpeg's peak is its VmHWM (peak resident set) read from /proc while it runs.
 *
 *   npm run bench          (runs this after the other parts)
 *   tsx scripts/bench/video.ts   (this part alone)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './make-fixtures.js';
import { treeCpuSeconds } from './proc-cpu.js';
import { processTree, PssSampler } from './proc-mem.js';
import { createKeyWithCli, DEFAULT_BIN, freePort } from './service.js';
import { nowMs, round } from './stats.js';

/** A long page: 40 sections of text and colour, no network. */
const PAGE = `<!doctype html><html><body style="font-family:sans-serif;margin:24px">${Array.from(
  { length: 40 },
  (_, i) =>
    `<section style="padding:12px;margin:12px;background:hsl(${i * 9},60%,85%)"><h2>Section ${i}</h2><p>${'Lorem ipsum dolor sit amet. '.repeat(12)}</p></section>`,
).join('')}</body></html>`;

const CASES = [
  { format: 'mp4', viewportWidth: 1280, viewportHeight: 720, videoFps: 24, videoDuration: 5 },
  { format: 'webm', viewportWidth: 1280, viewportHeight: 720, videoFps: 24, videoDuration: 5 },
  { format: 'gif', viewportWidth: 640, viewportHeight: 360, videoFps: 12, videoDuration: 5 },
] as const;

/** Peak resident set of a process so far (VmHWM), in KiB; 0 once it is gone. */
function peakRssKb(pid: number): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

async function startServe(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(process.execPath, [DEFAULT_BIN, 'serve'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', () => undefined);
  const origin = `http://127.0.0.1:${env.PORT}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error('serve exited');
    try {
      if ((await fetch(`${origin}/health`)).ok) return { child, origin };
    } catch {
      // not up yet
    }
    if (Date.now() - started > 60_000) throw new Error('serve did not start');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function benchVideo(): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), 'daguerre-bench-video-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${join(dataDir, 'bench.db')}`,
    DEMO_KEY_FILE: join(dataDir, 'demo-api-key.txt'),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '1000000',
    CAPTURE_WORKERS: '0',
  };
  delete env.REDIS_URL;
  const serve = await startServe(env);
  const rows: string[] = [];
  try {
    const key = await createKeyWithCli(REPO_ROOT, DEFAULT_BIN, env, 1_000);
    for (const options of CASES) {
      // Samples every ffmpeg below the service while the request runs.
      const peaks = new Map<number, number>();
      const sampler = setInterval(() => {
        for (const proc of processTree(serve.child.pid!)) {
          if (proc.comm === 'ffmpeg') peaks.set(proc.pid, Math.max(peaks.get(proc.pid) ?? 0, peakRssKb(proc.pid)));
        }
      }, 20);
      const pss = new PssSampler(serve.child.pid!, 100);
      pss.start();
      const cpuBefore = treeCpuSeconds(serve.child.pid!);
      const started = nowMs();
      const response = await fetch(`${serve.origin}/capture`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ html: PAGE, ...options }),
      });
      const bytes = (await response.arrayBuffer()).byteLength;
      const wallMs = nowMs() - started;
      // The encoder has exited and been reaped by now: its CPU is in the service's children's time.
      const cpuSeconds = treeCpuSeconds(serve.child.pid!) - cpuBefore;
      const peakPss = pss.stop().peakKb;
      clearInterval(sampler);
      if (response.status !== 200) throw new Error(`${options.format}: status ${response.status}`);
      const peakKb = Math.max(0, ...peaks.values());
      rows.push(
        `| ${options.format} | ${options.viewportWidth}×${options.viewportHeight} @ ${options.videoFps} fps, ${options.videoDuration} s | ${round(wallMs / 1000 / options.videoDuration, 2)} s | ${round(cpuSeconds / options.videoDuration, 2)} | ${round(peakPss / 1024, 0)} MiB | ${Math.round(bytes / 1024)} KiB | ${round(peakKb / 1024, 1)} MiB |`,
      );
    }
  } finally {
    serve.child.kill('SIGTERM');
    await new Promise((resolve) => serve.child.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
  return [
    '## Scrolling video (format mp4, webm, gif)',
    '',
    `One inline page (40 sections), POST /capture, this ${process.env.BENCH_MACHINE ?? '2-core'} machine. Frames are taken in real time,`,
    "so 1.0 s per video second is the floor; the rest is page load, encoding and the answer. CPU is the whole service's",
    "(Node, Chromium, ffmpeg) over the request; peak PSS is the service's (Node and Chromium) sampled every 100 ms, beside ffmpeg's peak RSS.",
    '',
    '| format | frames | wall time per video second | CPU-s per video second | service peak PSS | file | ffmpeg peak RSS |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = await benchVideo();
  console.log(report);
  await mkdir(join(REPO_ROOT, '.bench'), { recursive: true });
  await writeFile(join(REPO_ROOT, '.bench', 'video.md'), `${report}\n`);
}

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ENCODER_NICENESS } from '../../server/src/capture/output/video-encoder.js';
import { ownerTag } from '../../server/src/capture/browser/profile-owner.js';
import { seedOrganization, spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { alive, descendantsOf } from '../helpers/process-tree.js';
import { until } from '../helpers/until.js';
import { probeVideo } from '../helpers/video.js';

/** A long page of text and colour, inline (no network): something to scroll for 20 s. */
const PAGE = `<body style="margin:0;font-family:sans-serif">${Array.from(
  { length: 40 },
  (_, i) =>
    `<section style="padding:24px;background:hsl(${i * 9},60%,80%)"><h2>Section ${i}</h2><p>${'Lorem ipsum dolor sit amet. '.repeat(20)}</p></section>`,
).join('')}</body>`;

/** Fields of /proc/<pid>/stat after the command name: state is [0], nice [16]. */
const statFields = (path: string) => {
  const stat = readFileSync(path, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
};
const niceOf = (path: string) => Number(statFields(path)[16]);

/**
 * docs/video.md: a process killed with SIGKILL while it encodes a video. ffmpeg must die with it
 * (a parent-death signal) rather than encode on until its input closes, and the encoder's temporary
 * folder, which the dead process could not remove, is removed by the next start, which leaves a live
 * process's folder alone.
 */
describe('a service killed while it encodes a video', () => {
  const children: ChildService[] = [];
  let database: TestDatabase | undefined;
  /** A folder named after a live process (this test's), as an encoding of its would be. */
  const liveFolder = mkdtempSync(join(tmpdir(), `daguerre-video-${ownerTag()}`));

  afterEach(async () => {
    for (const child of children.splice(0)) {
      await child.stop();
      child.reapOrphans();
    }
  });
  afterAll(async () => {
    rmSync(liveFolder, { recursive: true, force: true });
    await database?.drop();
  });

  it("ffmpeg (niced) ends with the killed service, its folder is left unfinished and the next start removes it, never a live process's", async () => {
    database = await createTestDatabase('sqlite');
    const { apiKey } = await seedOrganization(database.url, 10);
    const env = { DATABASE_URL: database.url, RATE_LIMIT_MAX: '1000' };
    const first = await spawnService(env);
    children.push(first);

    const video = fetch(`${first.url}/capture`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ html: PAGE, format: 'mp4', videoDuration: 20, videoFps: 10, viewportWidth: 640, viewportHeight: 480 }),
    }).then(
      (response) => response.status,
      () => 'connection closed',
    );

    // Encoding: ffmpeg runs below the service and has written part of the video into its folder.
    const ffmpeg = await until(
      () => descendantsOf(first.pid).find((p) => p.cmdline.startsWith('ffmpeg ')),
      60_000,
      'ffmpeg to start below the service',
    );
    const prefix = `daguerre-video-${first.pid}-`;
    const folder = await until(
      () => readdirSync(tmpdir()).find((name) => name.startsWith(prefix)),
      10_000,
      "the encoder's folder, named after the service",
    );
    const output = join(tmpdir(), folder, 'video.mp4');
    await until(
      () => ((statSync(output, { throwIfNoEntry: false })?.size ?? 0) > 0 ? true : undefined),
      30_000,
      'ffmpeg to write part of the video',
    );
    // ffmpeg is a direct child (setpriv and nice exec it under one pid), and every thread of it runs niced.
    expect(ffmpeg.ppid).toBe(first.pid);
    const serviceNice = niceOf(`/proc/${first.pid}/stat`);
    const threads = readdirSync(`/proc/${ffmpeg.pid}/task`);
    expect(threads.length).toBeGreaterThan(1);
    for (const thread of threads)
      expect(niceOf(`/proc/${ffmpeg.pid}/task/${thread}/stat`)).toBe(Math.min(19, serviceNice + ENCODER_NICENESS));

    await first.kill();
    expect(await video).toBe('connection closed');
    await until(() => (alive(ffmpeg.pid) ? undefined : true), 5_000, 'ffmpeg to end with the service');
    // Killed, not ended by its input closing: an ffmpeg that saw the end of its input would have
    // finished the file (the index that makes an mp4 playable); this one is cut off mid-stream.
    const leftover = readFileSync(output);
    expect(leftover.length).toBeGreaterThan(0);
    await expect(probeVideo(leftover, 'mp4')).rejects.toThrow();

    // The next start on this machine removes the dead process's folder; the live process's stays.
    const second = await spawnService(env);
    children.push(second);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith(prefix))).toEqual([]);
    expect(statSync(liveFolder).isDirectory()).toBe(true);
  }, 180_000);
});

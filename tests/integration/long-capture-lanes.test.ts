import type { ErrorBody } from '@daguerre/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedOrganization, spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { probeVideo } from '../helpers/video.js';

/**
 * Videos and other long captures take their own lanes (server/src/capture/pool/capture-lanes.ts), against a real `daguerre serve`:
 * two organizations each send three synchronous videos at once, a third sends screenshots. Before,
 * the six videos held every render slot: the third organization's captures all ended 504 after
 * their deadline and the videos themselves 504 after 170 s, uncharged. Now one video records (the
 * instance's VIDEO_CONCURRENCY), the others are refused at once with 503 and Retry-After
 * (their organization's share is taken, or they could not end within their own deadline) but the
 * other organization's first, which may wait its turn, and
 * the third organization's screenshots go on in the slots kept for them.
 */
const TALL_PAGE =
  '<body style="margin:0"><div style="height:8000px;background:linear-gradient(#e63946,#f1faee,#1d3557)"><h1 style="font:60px sans-serif">Video lane</h1></div></body>';
const VIDEO = { html: TALL_PAGE, format: 'mp4', viewportWidth: '640', viewportHeight: '360', videoFps: '24', videoDuration: '6' };

interface Answer {
  status: number;
  at: number;
  retryAfter: string | null;
  code?: string;
  message?: string;
  bytes?: Uint8Array;
}

describe('videos and long captures against the other organizations', () => {
  let database: TestDatabase;
  let service: ChildService;
  const orgs: Record<'a' | 'b' | 'c', { apiKey: string }> = {} as never;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    for (const name of ['a', 'b', 'c'] as const) orgs[name] = await seedOrganization(database.url, 1_000);
    service = await spawnService({
      DATABASE_URL: database.url,
      MAX_CONCURRENCY: '3',
      VIDEO_CONCURRENCY: '1',
      // A short base deadline: a 1920×1080 video of 20 s at 30 fps cannot be recorded within its own.
      CAPTURE_TIMEOUT_MS: '8000',
      RATE_LIMIT_MAX: '10000',
    });
  });
  afterAll(async () => {
    await service?.stop();
    service?.reapOrphans();
    await database?.drop();
  });

  const capture = async (org: 'a' | 'b' | 'c', params: Record<string, string>): Promise<Answer> => {
    const response = await fetch(`${service.url}/capture?${new URLSearchParams(params).toString()}`, {
      headers: { 'x-api-key': orgs[org].apiKey },
    });
    const at = Date.now();
    const retryAfter = response.headers.get('retry-after');
    if (!response.ok) {
      const { error } = (await response.json()) as ErrorBody;
      return { status: response.status, at, retryAfter, code: error.code, message: error.message };
    }
    return { status: response.status, at, retryAfter, bytes: new Uint8Array(await response.arrayBuffer()) };
  };
  const usedCredits = async (org: 'a' | 'b' | 'c') => {
    const response = await fetch(`${service.url}/usage`, { headers: { 'x-api-key': orgs[org].apiKey } });
    return ((await response.json()) as { credits: { usedThisPeriod: number } }).credits.usedThisPeriod;
  };

  it('refuses at once, uncharged, a synchronous video the instance cannot record within its deadline', async () => {
    const answer = await capture('a', { ...VIDEO, viewportWidth: '1920', viewportHeight: '1080', videoFps: '30', videoDuration: '20' });
    expect(answer.status).toBe(503);
    expect(answer.code).toBe('SERVICE_UNAVAILABLE');
    expect(answer.message).toMatch(/This video would take about \d+ s here \(600 frames of 2.1 Mpx.*POST \/captures/);
    expect(await usedCredits('a')).toBe(0);
  });

  it('records one video of six at a time, refuses those past their share at once with Retry-After, and keeps slots for a third organization', async () => {
    const videos = (['a', 'a', 'a', 'b', 'b', 'b'] as const).map((org) => capture(org, VIDEO).then((answer) => ({ org, ...answer })));
    // The third organization's screenshots while the videos are sent and recorded, one after another.
    const screenshots: Array<{ status: number; ms: number }> = [];
    let videosDone = false;
    const allVideos = Promise.all(videos).finally(() => (videosDone = true));
    while (!videosDone) {
      const started = Date.now();
      const answer = await capture('c', {
        html: '<h1 style="color:#2a9d8f">Third organization</h1>',
        viewportWidth: '800',
        viewportHeight: '600',
      });
      screenshots.push({ status: answer.status, ms: Date.now() - started });
    }
    const answers = await allVideos;

    const recorded = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    // One video records; the second organization's first either waits for it (when both fit in its
    // deadline at the speed the instance measures) or is refused. Every other is refused at once:
    // its organization already has its share (one place) recording or waiting.
    expect(recorded.length).toBeGreaterThanOrEqual(1);
    expect(recorded.length).toBeLessThanOrEqual(2);
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.code).toBe('SERVICE_UNAVAILABLE');
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    const firstDone = Math.min(...recorded.map((answer) => answer.at));
    expect(refused.filter((answer) => answer.at < firstDone).length).toBeGreaterThanOrEqual(4);
    for (const org of ['a', 'b']) expect(recorded.filter((answer) => answer.org === org).length).toBeLessThanOrEqual(1);
    for (const answer of recorded) {
      const video = await probeVideo(answer.bytes!, 'mp4');
      expect([video.width, video.height]).toEqual([640, 360]);
      expect(video.frames).toBe(144);
    }
    // Charged for the videos it recorded (one capture's credits per started 10 s), nothing else.
    expect((await usedCredits('a')) + (await usedCredits('b'))).toBe(recorded.length);

    expect(screenshots.length).toBeGreaterThan(0);
    expect(screenshots.every((shot) => shot.status === 200)).toBe(true);
    const worst = Math.max(...screenshots.map((shot) => shot.ms));
    const median = screenshots.map((shot) => shot.ms).sort((x, y) => x - y)[Math.floor(screenshots.length / 2)];
    console.log(`third organization during the video flood: ${screenshots.length} screenshots, median ${median} ms, worst ${worst} ms`);
  });

  it('runs one long delay at a time beside the videos, refuses the rest at once, and a third organization keeps its ordinary latency', async () => {
    // MAX_CONCURRENCY 3, VIDEO_CONCURRENCY 1: one place for long captures, one slot kept for the rest.
    const slow = { html: '<h1>slow</h1>', viewportWidth: '400', viewportHeight: '300', delay: '20000' };
    const before = (await usedCredits('a')) + (await usedCredits('b'));
    const longOnes = (['a', 'a', 'b', 'b'] as const).map((org) => capture(org, slow));
    const shots: number[] = [];
    let done = false;
    const all = Promise.all(longOnes).finally(() => (done = true));
    while (!done) {
      const started = Date.now();
      expect(
        (await capture('c', { html: '<h1 style="color:#264653">Third</h1>', viewportWidth: '800', viewportHeight: '600' })).status,
      ).toBe(200);
      shots.push(Date.now() - started);
    }
    const answers = await all;
    const ran = answers.filter((answer) => answer.status === 200);
    expect(ran).toHaveLength(1);
    for (const answer of answers.filter((answer) => answer.status !== 200)) {
      expect(answer.status).toBe(503);
      expect(answer.message).toMatch(/long capture/);
      expect(answer.at).toBeLessThan(ran[0]!.at);
    }
    expect((await usedCredits('a')) + (await usedCredits('b'))).toBe(before + 1);
    console.log(`third organization during the long delays: ${shots.length} screenshots, worst ${Math.max(...shots)} ms`);
  });
});

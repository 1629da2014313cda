import { describe, expect, it } from 'vitest';
import { VideoLane, type VideoTicket } from '../../server/src/capture/video-lane.js';
import { ApiError } from '../../server/src/errors.js';

/** The video lane's rules with tasks the test ends itself (the real videos: tests/integration/video-lane.test.ts). */
const SMALL = { frames: 48, framePixels: 640 * 360, durationMs: 2_000 };
const LONG = { frames: 1_800, framePixels: 1920 * 1080, durationMs: 60_000 };

function ticket(organizationId: string, overrides: Partial<VideoTicket> = {}): VideoTicket {
  return { organizationId, shape: SMALL, sync: false, deadline: Date.now() + 60_000, signal: new AbortController().signal, ...overrides };
}

/** A task that runs until the test ends it. */
function held() {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  let started = false;
  return {
    task: () => {
      started = true;
      return done;
    },
    end,
    get started() {
      return started;
    },
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('video lane', () => {
  it('starts waiting videos by least video time, never more than an organization share', async () => {
    const lane = new VideoLane({ slots: 2, maxOrgSharePercent: 50 });
    const a1 = held();
    const a2 = held();
    const b1 = held();
    const runs = [lane.run(ticket('a', { shape: LONG }), a1.task), lane.run(ticket('a'), a2.task), lane.run(ticket('b'), b1.task)];
    await flush();
    // a holds its share (one of two places): its second waits though a place is free; b starts.
    expect([a1.started, a2.started, b1.started]).toEqual([true, false, true]);
    const b2 = held();
    runs.push(lane.run(ticket('b'), b2.task));
    b1.end();
    await flush();
    // b's place freed: b's second video takes it (a is at its share, whatever its order of arrival).
    expect([a2.started, b2.started]).toEqual([false, true]);
    a1.end();
    await flush();
    expect(a2.started).toBe(true);
    a2.end();
    b2.end();
    await Promise.all(runs);
    expect(lane.snapshot()).toEqual({ recording: 0, waiting: 0 });
  });

  it('gives a freed place to the organization that had the least video time', async () => {
    const lane = new VideoLane({ slots: 1, maxOrgSharePercent: 100 });
    const first = held();
    const running = lane.run(ticket('heavy', { shape: LONG }), first.task);
    const heavyAgain = held();
    const light = held();
    const runs = [running, lane.run(ticket('heavy'), heavyAgain.task), lane.run(ticket('light'), light.task)];
    await flush();
    first.end();
    await flush();
    // heavy came first, but its minute of video counts against it.
    expect([heavyAgain.started, light.started]).toEqual([false, true]);
    light.end();
    await flush();
    heavyAgain.end();
    await Promise.all(runs);
  });

  it('refuses a synchronous video that would wait past its deadline, with the wait as Retry-After', async () => {
    const lane = new VideoLane({ slots: 1, maxOrgSharePercent: 50 });
    const first = held();
    const running = lane.run(ticket('a', { shape: LONG }), first.task);
    const refused = await lane
      .run(ticket('b', { sync: true, deadline: Date.now() + 30_000 }), async () => undefined)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('SERVICE_UNAVAILABLE');
    expect((refused as ApiError).options.retryAfterSeconds).toBeGreaterThan(60);
    first.end();
    await running;
  });
});

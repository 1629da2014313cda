import { describe, expect, it } from 'vitest';
import { CaptureQuerySchema } from '@daguerre/contract';
import { CaptureLanes } from '../../server/src/capture/pool/capture-lanes.js';
import { LongCaptureLane, type LaneTicket } from '../../server/src/capture/pool/long-capture-lane.js';
import { VideoEstimate } from '../../server/src/capture/pool/video-estimate.js';
import { ApiError } from '../../server/src/errors.js';
import { captureFailure } from '../../server/src/services/capture-failures.js';

/** The lanes' rules with tasks the test ends itself (the real videos: tests/integration/long-capture-lanes.test.ts). */
const SMALL = 5_000;
const LONG = 150_000;
const WORDS = { one: 'video', many: 'videos', runs: 'records' };

function ticket(organizationId: string, overrides: Partial<LaneTicket> = {}): LaneTicket {
  return {
    organizationId,
    expectedMs: SMALL,
    why: 'a test',
    sync: false,
    deadline: Date.now() + 60_000,
    signal: new AbortController().signal,
    ...overrides,
  };
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

describe('long-capture lanes', () => {
  it('starts waiting videos by least video time, never more than an organization share', async () => {
    const lane = new LongCaptureLane({ slots: 2, maxOrgSharePercent: 50, words: WORDS });
    const a1 = held();
    const a2 = held();
    const b1 = held();
    const runs = [lane.run(ticket('a', { expectedMs: LONG }), a1.task), lane.run(ticket('a'), a2.task), lane.run(ticket('b'), b1.task)];
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
    const lane = new LongCaptureLane({ slots: 1, maxOrgSharePercent: 100, words: WORDS });
    const first = held();
    const running = lane.run(ticket('heavy', { expectedMs: LONG }), first.task);
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
    const lane = new LongCaptureLane({ slots: 1, maxOrgSharePercent: 50, words: WORDS });
    const first = held();
    const running = lane.run(ticket('a', { expectedMs: LONG }), first.task);
    const refused = await lane
      .run(ticket('b', { sync: true, deadline: Date.now() + 30_000 }), async () => undefined)
      // The lane refuses in the capture's words; the answer is the service's (capture-failures.ts).
      .catch((error: unknown) => captureFailure(error, 0));
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('SERVICE_UNAVAILABLE');
    expect((refused as ApiError).options.retryAfterSeconds).toBeGreaterThan(60);
    first.end();
    await running;
  });

  it('sends videos and captures that ask to wait 10 s or more to a lane, and the rest straight to the render slots', () => {
    const options = (query: Record<string, string>) => CaptureQuerySchema.parse({ html: '<p>x</p>', ...query });
    expect(CaptureLanes.needsLane(options({ format: 'mp4' }))).toBe(true);
    expect(CaptureLanes.needsLane(options({ delay: '10000' }))).toBe(true);
    expect(
      CaptureLanes.needsLane(options({ delay: '6000', fullPage: 'true', fullPageScroll: 'true', fullPageScrollDuration: '5000' })),
    ).toBe(true);
    expect(CaptureLanes.needsLane(options({ delay: '9000' }))).toBe(false);
    expect(CaptureLanes.needsLane(options({}))).toBe(false);
  });

  it('refuses a second synchronous long capture of an organization at its share, naming what it asked', async () => {
    const lanes = new CaptureLanes({ renderSlots: 4, videoSlots: 1, maxOrgSharePercent: 50 });
    const first = held();
    const request = {
      organizationId: 'a',
      options: CaptureQuerySchema.parse({ html: '<p>x</p>', delay: '30000' }),
      sync: true,
      deadline: Date.now() + 65_000,
      signal: new AbortController().signal,
      sharePercent: null,
    };
    const running = lanes.run(request, first.task);
    await flush();
    expect(first.started).toBe(true);
    // Two places for long captures (4 slots, one for videos, one kept): one is a's share.
    const refused = await lanes.run(request, async () => undefined).catch((error: unknown) => captureFailure(error, 0));
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).message).toMatch(
      /already has a long capture running or waiting on this instance, its share of the 2 it runs at once/,
    );
    // Another organization has the second place.
    const other = held();
    const otherRun = lanes.run({ ...request, organizationId: 'b' }, other.task);
    await flush();
    expect(other.started).toBe(true);
    first.end();
    other.end();
    await Promise.all([running, otherRun]);
  });

  it('expects a video that ran out of its deadline to outlast it next time', () => {
    const estimate = new VideoEstimate();
    const shape = { frames: 600, framePixels: 1920 * 1080, durationMs: 20_000 };
    const budget = 30_000 + 20_000 + 600 * 200;
    expect(estimate.expectedMs(shape)).toBeLessThan(budget);
    estimate.learnTooSlow(shape, budget);
    expect(estimate.expectedMs(shape)).toBeGreaterThan(budget);
  });
});

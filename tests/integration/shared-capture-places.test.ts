import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../server/src/errors.js';
import { ConcurrencyGate } from '../../server/src/services/concurrency-gate.js';
import { RedisCapturePlaces } from '../../server/src/services/shared-capture-places.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { until } from '../helpers/until.js';

/**
 * The shared count of a plan's concurrent captures, between two gates (two processes' worth) on a
 * Redis of the test's own, which the test kills: while Redis is gone each gate counts its own
 * captures (the documented fallback) rather than failing, and once it is back they share again.
 */
describe('concurrent-capture places in Redis', () => {
  const redisServer = new PrivateRedis();
  const clients: Redis[] = [];
  let gates: [ConcurrencyGate, ConcurrencyGate];

  const client = () => {
    // As the runtime makes it (rateLimitStore): nothing is queued while Redis is unreachable.
    const redis = new Redis(redisServer.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    clients.push(redis);
    return redis;
  };
  const request = (wait = false) => ({
    organizationId: 'org_shared',
    planLimit: 2,
    wait,
    deadline: Date.now() + 5_000,
    signal: new AbortController().signal,
  });
  const refusal = (work: Promise<unknown>) =>
    work.then(
      () => undefined,
      (error: unknown) => error,
    );

  beforeAll(async () => {
    await redisServer.start();
    const logger = pino({ level: 'silent' });
    gates = [
      new ConcurrencyGate(10, new RedisCapturePlaces(client(), 'places-test', logger)),
      new ConcurrencyGate(10, new RedisCapturePlaces(client(), 'places-test', logger)),
    ];
    await until(() => (clients.every((redis) => redis.status === 'ready') ? true : undefined), 10_000, 'both clients to connect');
  });
  afterAll(async () => {
    for (const redis of clients) redis.disconnect();
    await redisServer.stop();
  });

  it('counts across gates, lets a waiting one in when a place frees, and falls back to each gate’s own count while Redis is gone', async () => {
    const [one, two] = gates;
    const leaveOne = await one.enter(request());
    const leaveTwo = await two.enter(request());
    // Either process: the third is refused at once.
    const refused = await refusal(one.enter(request()));
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('CONCURRENCY_LIMIT_EXCEEDED');
    // An async one waits for a place on the other process.
    const waiting = two.enter(request(true));
    leaveOne();
    const leaveWaiting = await waiting;
    leaveTwo();
    leaveWaiting();

    await redisServer.kill();
    await until(() => (clients.every((redis) => redis.status !== 'ready') ? true : undefined), 10_000, 'both clients to see Redis gone');
    // Each process alone: up to the limit on each, never an error of its own.
    const local = [await one.enter(request()), await one.enter(request()), await two.enter(request()), await two.enter(request())];
    expect(((await refusal(one.enter(request()))) as ApiError).code).toBe('CONCURRENCY_LIMIT_EXCEEDED');
    for (const leave of local) leave();

    await redisServer.start();
    await until(() => (clients.every((redis) => redis.status === 'ready') ? true : undefined), 20_000, 'both clients to reconnect');
    const again = [await one.enter(request()), await two.enter(request())];
    expect(((await refusal(two.enter(request()))) as ApiError).code).toBe('CONCURRENCY_LIMIT_EXCEEDED');
    for (const leave of again) leave();
  });
});

import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import type { RateLimitStore } from '../http/rate-limit.js';
import type { DataLayer } from '../services/data-layer.js';

function rateLimitStore(config: Config, data: DataLayer): { store: RateLimitStore; redis?: Redis } {
  if (config.REDIS_URL) {
    const redis = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
    // It reconnects by itself; requests meanwhile fail closed (503). Without a listener every refused
    // reconnection would print "Unhandled error event" while Redis is down.
    redis.on('error', () => undefined);
    return { store: { kind: 'redis', client: redis }, redis };
  }
  if (data.db.dialect === 'mysql') {
    const databaseName = new URL(config.DATABASE_URL).pathname.replace(/^\//, '') || 'daguerre';
    return { store: { kind: 'mysql', db: data.db, databaseName } };
  }
  return { store: { kind: 'memory' } };
}

/** Opens the rate limiter's store: Redis with REDIS_URL (its client also shared by the capture places), else MySQL's, else memory. */
export async function openRateLimitStore(config: Config, data: DataLayer): Promise<{ store: RateLimitStore; redis?: Redis }> {
  const { store, redis } = rateLimitStore(config, data);
  // The limiter's client queues nothing while offline (fail closed): let it connect before the first request.
  // It also counts the plans' concurrent captures across instances (shared-capture-places.ts).
  if (redis && redis.status !== 'ready') {
    await new Promise<void>((resolve) => {
      const done = () => resolve();
      redis.once('ready', done);
      setTimeout(() => {
        redis.off('ready', done);
        resolve();
      }, 5_000).unref();
    });
  }
  return redis ? { store, redis } : { store };
}

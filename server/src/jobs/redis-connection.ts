import { Redis } from 'ioredis';

/**
 * A Redis connection for BullMQ. Workers block on Redis and must never give up a command
 * (maxRetriesPerRequest: null is BullMQ's requirement); each queue and worker gets its own.
 */
export function jobConnection(redisUrl: string): Redis {
  return new Redis(redisUrl, { maxRetriesPerRequest: null });
}

/** A connection for the API's short commands (enqueue, status, result reads): fails fast when Redis is down. */
export function commandConnection(redisUrl: string): Redis {
  return new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
}

import { Redis } from 'ioredis';

/**
 * A Redis connection for BullMQ. Workers block on Redis and must never give up a command
 * (maxRetriesPerRequest: null is BullMQ's requirement); each queue and worker gets its own.
 */
export function jobConnection(redisUrl: string): Redis {
  return quiet(new Redis(redisUrl, { maxRetriesPerRequest: null }));
}

/**
 * ioredis reconnects by itself; without a listener each refused reconnection would print
 * "Unhandled error event" while Redis is down. The queue's own users report what failed.
 */
function quiet(connection: Redis): Redis {
  connection.on('error', () => undefined);
  return connection;
}

/**
 * A connection for short commands (result files, status reads): a command sent while it is still
 * connecting waits for it (a worker's first job can end before that), and one sent while Redis is
 * down fails after one reconnection attempt instead of hanging.
 */
export function commandConnection(redisUrl: string): Redis {
  return quiet(new Redis(redisUrl, { maxRetriesPerRequest: 1 }));
}

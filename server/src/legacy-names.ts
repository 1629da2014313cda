import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';

/**
 * The project was called Rendershot before it became Daguerre. A deployment of the old name keeps
 * working: when a setting was left to its default, the old default data file and job-queue prefix
 * are found and used, with one log line each saying so, and a database's record of its migrations
 * takes the new table name. Nothing else keeps the old name.
 */
export const LEGACY = {
  dataFile: './data/rendershot.db',
  queuePrefix: 'rendershot',
  /** knex's record of the migrations run (store/former-migration-names.ts renames it). */
  migrationsTable: 'rendershot_migrations',
} as const;

export const NEW_DEFAULTS = {
  dataFile: './data/daguerre.db',
  queuePrefix: 'daguerre',
} as const;

/** The settings these choices read (config.ts's Config has them; not imported, config.ts imports this file). */
interface NamedSettings {
  DATABASE_URL: string;
  JOB_QUEUE_PREFIX: string;
  REDIS_URL?: string;
}

export interface Adopted<C> {
  config: C;
  /** The log line to write, when an old name was adopted. */
  notice?: string;
}

/** The old default SQLite file, when DATABASE_URL was not set, the new file does not exist and the old one does. */
export function adoptLegacyDataFile<C extends NamedSettings>(
  config: C,
  env: NodeJS.ProcessEnv,
  exists: (path: string) => boolean = existsSync,
): Adopted<C> {
  if (env.DATABASE_URL || config.DATABASE_URL !== `sqlite:${NEW_DEFAULTS.dataFile}`) return { config };
  if (exists(NEW_DEFAULTS.dataFile) || !exists(LEGACY.dataFile)) return { config };
  return {
    config: { ...config, DATABASE_URL: `sqlite:${LEGACY.dataFile}` },
    notice: `Using ${LEGACY.dataFile}, the data file of this deployment from before the project was renamed Daguerre; rename it to ${NEW_DEFAULTS.dataFile} (or set DATABASE_URL) to silence this line`,
  };
}

/** Whether the old default queue prefix holds BullMQ keys in this Redis (a deployment of the old name). */
export async function legacyQueueExists(redisUrl: string, queueName: string): Promise<boolean> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000 });
  try {
    await redis.connect();
    return (await redis.exists(`${LEGACY.queuePrefix}:${queueName}:meta`, `${LEGACY.queuePrefix}:${queueName}:id`)) > 0;
  } finally {
    redis.disconnect();
  }
}

/** The old default queue prefix, when JOB_QUEUE_PREFIX was not set and Redis holds the old queue. */
export async function adoptLegacyQueuePrefix<C extends NamedSettings>(
  config: C,
  env: NodeJS.ProcessEnv,
  queueExists: () => Promise<boolean>,
): Promise<Adopted<C>> {
  if (env.JOB_QUEUE_PREFIX || config.JOB_QUEUE_PREFIX !== NEW_DEFAULTS.queuePrefix || !config.REDIS_URL) return { config };
  if (!(await queueExists().catch(() => false))) return { config };
  return {
    config: { ...config, JOB_QUEUE_PREFIX: LEGACY.queuePrefix },
    notice: `Using the job queue prefix "${LEGACY.queuePrefix}" found in Redis, from before the project was renamed Daguerre; set JOB_QUEUE_PREFIX=${LEGACY.queuePrefix} to keep it and silence this line`,
  };
}

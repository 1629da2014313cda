import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { adoptLegacyDataFile, adoptLegacyQueuePrefix, LEGACY, NEW_DEFAULTS } from '../../server/src/legacy-names.js';

/** A deployment from before the rename keeps its data file and its job queue, and says so once. */
describe('old names of a deployment from before the rename', () => {
  const defaults = loadConfig({});

  it('uses the old default data file when it exists, the new one does not and DATABASE_URL is unset', () => {
    const only = (path: string) => (p: string) => p === path;
    const adopted = adoptLegacyDataFile(defaults, {}, only(LEGACY.dataFile));
    expect(adopted.config.DATABASE_URL).toBe(`sqlite:${LEGACY.dataFile}`);
    expect(adopted.notice).toContain(LEGACY.dataFile);
    // The new file wins once it exists, and an explicit DATABASE_URL always does.
    expect(adoptLegacyDataFile(defaults, {}, () => true).config.DATABASE_URL).toBe(`sqlite:${NEW_DEFAULTS.dataFile}`);
    expect(adoptLegacyDataFile(defaults, {}, only('nothing')).notice).toBeUndefined();
    const explicit = loadConfig({ DATABASE_URL: `sqlite:${NEW_DEFAULTS.dataFile}` });
    expect(
      adoptLegacyDataFile(explicit, { DATABASE_URL: `sqlite:${NEW_DEFAULTS.dataFile}` }, only(LEGACY.dataFile)).notice,
    ).toBeUndefined();
  });

  it('uses the old default queue prefix when Redis holds its queue and JOB_QUEUE_PREFIX is unset', async () => {
    const withRedis = { ...defaults, REDIS_URL: 'redis://127.0.0.1:6379' };
    const adopted = await adoptLegacyQueuePrefix(withRedis, {}, async () => true);
    expect(adopted.config.JOB_QUEUE_PREFIX).toBe(LEGACY.queuePrefix);
    expect(adopted.notice).toContain(`JOB_QUEUE_PREFIX=${LEGACY.queuePrefix}`);
    expect((await adoptLegacyQueuePrefix(withRedis, {}, async () => false)).config.JOB_QUEUE_PREFIX).toBe(NEW_DEFAULTS.queuePrefix);
    expect(
      (await adoptLegacyQueuePrefix(withRedis, { JOB_QUEUE_PREFIX: NEW_DEFAULTS.queuePrefix }, async () => true)).notice,
    ).toBeUndefined();
    // Redis unreachable: the new name, no crash.
    expect((await adoptLegacyQueuePrefix(withRedis, {}, async () => Promise.reject(new Error('down')))).config.JOB_QUEUE_PREFIX).toBe(
      NEW_DEFAULTS.queuePrefix,
    );
  });
});

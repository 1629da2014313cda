import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { openDataLayer } from '../../server/src/runtime.js';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { until } from '../helpers/until.js';

const run = promisify(execFile);
const CLI = new URL('../../server/bin/daguerre.js', import.meta.url).pathname;
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';

/**
 * A plan's concurrent-capture limit holds across API instances (services/shared-capture-places.ts):
 * two real `daguerre serve` processes on one MariaDB and one Redis, a plan of two at once. Before,
 * each instance counted its own, and the organization had four in progress. When an instance is
 * killed, its places come back within a lease (LEASE_MS), not never.
 */
describe('plan concurrency across two API instances (MariaDB, Redis)', () => {
  let database: TestDatabase;
  let fixtures: FixtureServer;
  const instances: ChildService[] = [];
  let apiKey: string;
  const held: ServerResponse[] = [];
  const prefix = `instances-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    database = await createTestDatabase('mysql');
    fixtures = await new FixtureServer().start();
    fixtures.route('/held', (_req, res) => void held.push(res));
    const planName = `two-at-once-${Date.now()}`;
    const data = await openDataLayer(loadConfig({}, { DATABASE_URL: database.url }));
    try {
      const plan = await data.accounts.createPlan({ name: planName, tier: 'test', creditsPerMonth: 100 });
      const org = await data.accounts.createOrganization('Two at once', plan);
      apiKey = (await data.apiKeys.create({ organizationId: org.id, name: 'two' })).key;
    } finally {
      await data.db.close();
    }
    await run('node', [CLI, 'plan', 'share', '--plan', planName, '--max-concurrent-captures', '2'], {
      env: { ...process.env, DATABASE_URL: database.url },
    });
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL,
      JOB_QUEUE_PREFIX: prefix,
      EGRESS_ALLOW_LIST: new URL(fixtures.url).host,
      MAX_CONCURRENCY: '3',
      CAPTURE_TIMEOUT_MS: '60000',
      RATE_LIMIT_MAX: '10000',
    };
    instances.push(...(await Promise.all([spawnService(env), spawnService(env)])));
  });
  afterAll(async () => {
    for (const res of held.splice(0)) res.end();
    for (const instance of instances) {
      await instance.stop();
      instance.reapOrphans();
    }
    await fixtures?.stop();
    await database?.drop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  const capture = (instance: ChildService, params: Record<string, string>) =>
    fetch(`${instance.url}/capture?${new URLSearchParams({ viewportWidth: '200', viewportHeight: '150', ...params }).toString()}`, {
      headers: { 'x-api-key': apiKey },
    });

  it('gives the organization two captures in progress across both instances, refuses the third on either, and frees a killed instance’s place', async () => {
    const [first, second] = instances as [ChildService, ChildService];
    // Each answer's status, or 'gone' when its instance died before answering.
    const inProgress = [first, second].map((instance) =>
      capture(instance, { url: `${fixtures.url}/held` }).then(
        (response) => response.status,
        () => 'gone' as const,
      ),
    );
    await until(() => (held.length === 2 ? true : undefined), 30_000, 'both held pages to be requested');

    for (const instance of instances) {
      const refused = await capture(instance, { html: OK_PAGE });
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { code: string; message: string } }).error.message).toMatch(/allows 2 at once/);
    }

    // The first instance dies with its capture in progress: its place is the lease's until it ends.
    await first.kill();
    first.reapOrphans();
    const freed = await until(
      async () => {
        const response = await capture(second, { html: OK_PAGE });
        await response.arrayBuffer();
        return response.status === 200 ? Date.now() : undefined;
      },
      30_000,
      "the killed instance's place to be free again",
      500,
    );
    expect(freed).toBeGreaterThan(0);

    for (const res of held.splice(0)) res.end(OK_PAGE);
    // The killed instance's request has no answer; the other's capture ends well.
    expect(await Promise.all(inProgress)).toEqual(['gone', 200]);
  });
});

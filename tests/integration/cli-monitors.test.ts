import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaguerreClient, Monitor } from '../../client/src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

const run = promisify(execFile);
const CLI = new URL('../../server/bin/daguerre.js', import.meta.url).pathname;
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * The CLI's face of monitors (docs/monitors.md): `daguerre monitor list --org`, `monitor pause |
 * resume | delete <id>`, run as an operator runs them (a process of its own on the service's
 * database and Redis), against a live service whose monitor keeps running.
 */
describe('daguerre monitor (CLI)', () => {
  let database: TestDatabase;
  let service: TestService;
  let client: DaguerreClient;
  let monitor: Monitor;
  const fixtures = new FixtureServer().page('/page', '<body style="margin:0"><h1>Steady page</h1></body>');
  const prefix = `rs-test-cli-monitors-${randomBytes(4).toString('hex')}`;

  const env = () => ({
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL,
    JOB_QUEUE_PREFIX: prefix,
    RESULTS_DIR: service.runtime.config.RESULTS_DIR,
  });
  const cli = async (...args: string[]) => {
    const { stdout } = await run('node', [CLI, ...args, '--json'], { env: env(), timeout: 30_000 });
    return JSON.parse(stdout) as Record<string, unknown> & Array<Record<string, unknown>>;
  };
  const schedulers = async () => (await service.runtime.monitors!.schedule.queue.getJobSchedulers(0, -1)).map((s) => s.key);

  beforeAll(async () => {
    await fixtures.start();
    database = await createTestDatabase('sqlite');
    service = await startTestService({
      databaseUrl: database.url,
      env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, MONITOR_MIN_INTERVAL_SECONDS: '1' },
    });
    client = service.client;
    monitor = await client.createMonitor({
      url: `${fixtures.url}/page`,
      intervalSeconds: 30,
      name: 'Steady',
      viewportWidth: 320,
      viewportHeight: 200,
    });
    await until(
      async () => ((await client.listRuns(monitor.monitorId)).runs.some((r) => r.status === 'succeeded') ? true : undefined),
      60_000,
      'the first run',
      250,
    );
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    await fixtures.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('monitor list --org: the monitors of the organization (by id or by name) as the API shows them', async () => {
    const list = await cli('monitor', 'list', '--org', service.organizationId);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ monitorId: monitor.monitorId, name: 'Steady', intervalSeconds: 30, paused: false });
    expect((list[0]!.lastRun as { status: string }).status).toBe('succeeded');
    const org = (await cli('org', 'list')).find((o) => o.id === service.organizationId)!;
    expect((await cli('monitor', 'list', '--org', String(org.name))).map((m) => m.monitorId)).toContain(monitor.monitorId);
    // Without --json, a table of one line per monitor.
    const { stdout } = await run('node', [CLI, 'monitor', 'list', '--org', service.organizationId], { env: env(), timeout: 30_000 });
    expect(stdout).toContain('Steady');
    expect(stdout).toContain('active');
  });

  it('monitor pause and resume change the database and the schedule in Redis', async () => {
    expect(await schedulers()).toContain(monitor.monitorId);
    expect(await cli('monitor', 'pause', monitor.monitorId)).toMatchObject({
      monitorId: monitor.monitorId,
      paused: true,
      pausedReason: 'user',
    });
    expect(await client.getMonitor(monitor.monitorId)).toMatchObject({ paused: true, nextRunAt: null });
    expect(await schedulers()).not.toContain(monitor.monitorId);

    expect(await cli('monitor', 'resume', monitor.monitorId)).toMatchObject({ paused: false, pausedReason: null });
    expect((await client.getMonitor(monitor.monitorId)).paused).toBe(false);
    expect(await schedulers()).toContain(monitor.monitorId);
  });

  it('monitor delete removes it, its runs and its schedule; an unknown id is an error naming it', async () => {
    expect(await cli('monitor', 'delete', monitor.monitorId)).toEqual({ id: monitor.monitorId, name: 'Steady', deleted: true });
    await expect(client.getMonitor(monitor.monitorId)).rejects.toMatchObject({ status: 404 });
    expect(await service.runtime.db.knex('monitor_runs').where('monitor_id', monitor.monitorId)).toEqual([]);
    expect(await schedulers()).not.toContain(monitor.monitorId);
    expect(await cli('monitor', 'list', '--org', service.organizationId)).toEqual([]);

    const failed = await run('node', [CLI, 'monitor', 'pause', monitor.monitorId, '--json'], { env: env() }).catch(
      (e: { stderr: string; code: number }) => e,
    );
    expect((failed as { code: number }).code).toBe(1);
    expect((failed as { stderr: string }).stderr).toContain(`No monitor with id "${monitor.monitorId}"`);
  });
});

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, DaguerreError, verifyWebhook, type DaguerreClient, type Monitor, type MonitorRun } from '../../client/src/index.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';
import { independentlyVerified, type Delivery } from '../helpers/webhooks.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const COLOURS = ['#1d4ed8', '#b91c1c', '#15803d', '#a16207'];

/**
 * The SDK's face of monitors (docs/monitors.md) against the real service (Redis, Chromium, SQLite):
 * every monitor method, a page that changes between runs and its monitor.changed webhook verified
 * by the SDK's verifyWebhook, a golden run, pages of runs, refusals naming the field, another
 * organization's key answered 404.
 */
describe('SDK: monitors', () => {
  let service: TestService;
  let client: DaguerreClient;
  let signingSecret: string;
  const fixtures = new FixtureServer();
  const prefix = `rs-test-client-monitors-${randomBytes(4).toString('hex')}`;
  const hooks: Delivery[] = [];
  let version = 0;
  let monitor: Monitor;

  const runsOf = async (monitorId: string) => (await client.listRuns(monitorId, { limit: 100 })).runs;
  /** Waits until the monitor has `count` succeeded runs compared with a baseline. */
  const comparedRuns = (monitorId: string, count: number) =>
    until(
      async () => {
        const compared = (await runsOf(monitorId)).filter((run) => run.status === 'succeeded' && run.diff !== null);
        return compared.length >= count ? compared : undefined;
      },
      90_000,
      `${count} compared runs of ${monitorId}`,
      250,
    );

  beforeAll(async () => {
    fixtures
      // A page that changes on every visit: another colour, another line of text.
      .route('/changing', (_req, res) => {
        version += 1;
        const colour = COLOURS[version % COLOURS.length];
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            `<!doctype html><body style="margin:0;font:20px sans-serif"><div style="height:120px;background:${colour}"></div><p>Price: ${version * 10} EUR</p></body>`,
          );
      })
      .route('/hook', (req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          hooks.push({ headers: req.headers, body });
          res.writeHead(204).end();
        });
      });
    await fixtures.start();
    service = await startTestService({
      credits: 1_000,
      env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, MONITOR_MIN_INTERVAL_SECONDS: '1', RATE_LIMIT_MAX: '1000' },
    });
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'Monitors key' });
    signingSecret = key.signingSecret;
    client = createClient({ baseUrl: service.url, apiKey: key.key });
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await fixtures.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('createMonitor, listMonitors, getMonitor: the monitor as the contract shows it', async () => {
    monitor = await client.createMonitor({
      url: `${fixtures.url}/changing`,
      intervalSeconds: 2,
      threshold: 0.5,
      webhookUrl: `${fixtures.url}/hook`,
      ignoreSelectors: ['#never-there'],
      name: 'Changing page',
      viewportWidth: 400,
      viewportHeight: 240,
    });
    expect(monitor).toMatchObject({
      name: 'Changing page',
      url: `${fixtures.url}/changing`,
      intervalSeconds: 2,
      threshold: 0.5,
      webhookUrl: `${fixtures.url}/hook`,
      ignoreSelectors: ['#never-there'],
      paused: false,
      pausedReason: null,
    });
    expect(monitor.monitorId).toMatch(/^[0-9a-f-]{36}$/);
    expect(monitor.options).toMatchObject({ viewportWidth: 400, viewportHeight: 240 });
    expect((await client.listMonitors()).map((m) => m.monitorId)).toContain(monitor.monitorId);
    expect(await client.getMonitor(monitor.monitorId)).toMatchObject({ monitorId: monitor.monitorId, name: 'Changing page' });
  });

  it('listRuns: a page that changed has a diff in pixels and in words, and monitor.changed is signed and typed', async () => {
    const compared = await comparedRuns(monitor.monitorId, 1);
    const run = compared[0]!;
    expect(run.diff!.diffPercent).toBeGreaterThan(0.5);
    expect(run.diff!.changed).toBe(true);
    expect(run.diff!.regions.length).toBeGreaterThan(0);
    expect(run.diff!.textAdded.join('\n')).toMatch(/Price: \d+ EUR/);
    expect(run.diff!.textRemoved.join('\n')).toMatch(/Price: \d+ EUR/);
    expect(run.credits).toBeGreaterThan(0);
    expect(run.imageUrl).toContain(`/monitors/${monitor.monitorId}/runs/${run.runId}/image`);

    const delivery = await until(
      () => hooks.find((hook) => (JSON.parse(hook.body) as { type: string }).type === 'monitor.changed'),
      60_000,
      'monitor.changed',
    );
    expect(independentlyVerified(signingSecret, delivery)).toBe(true);
    const event = verifyWebhook(signingSecret, delivery.body, delivery.headers as Record<string, string>);
    // Narrowing on type gives the monitor event's data.
    if (event.type !== 'monitor.changed') throw new Error(`expected monitor.changed, got ${event.type}`);
    expect(event.data.monitorId).toBe(monitor.monitorId);
    expect(event.data.run?.diff?.changed).toBe(true);
    expect(event.data.images?.diffUrl).toContain(`/monitors/${monitor.monitorId}/runs/`);
  }, 120_000);

  it('listRuns pages with limit and cursor, newest first', async () => {
    await comparedRuns(monitor.monitorId, 2);
    const first = await client.listRuns(monitor.monitorId, { limit: 1 });
    expect(first.runs).toHaveLength(1);
    expect(first.nextCursor).not.toBeNull();
    const second = await client.listRuns(monitor.monitorId, { limit: 1, cursor: first.nextCursor! });
    expect(second.runs).toHaveLength(1);
    expect(second.runs[0]!.runId).not.toBe(first.runs[0]!.runId);
    expect(Date.parse(second.runs[0]!.startedAt)).toBeLessThanOrEqual(Date.parse(first.runs[0]!.startedAt));
  }, 120_000);

  it('pinRun makes a run the golden baseline of later runs', async () => {
    const succeeded = (await runsOf(monitor.monitorId)).filter((run) => run.status === 'succeeded');
    const golden = succeeded[succeeded.length - 1]!;
    const pinned = await client.pinRun(monitor.monitorId, golden.runId);
    expect(pinned).toMatchObject({ runId: golden.runId, golden: true });
    expect((await client.getMonitor(monitor.monitorId)).goldenRunId).toBe(golden.runId);
    const later = await until(
      async () =>
        (await runsOf(monitor.monitorId)).find((run: MonitorRun) => run.baselineRunId === golden.runId && run.runId !== golden.runId),
      60_000,
      'a run compared with the golden one',
      250,
    );
    expect(later.diff).not.toBeNull();
  }, 120_000);

  it('pauseMonitor, resumeMonitor and updateMonitor change what they say', async () => {
    const paused = await client.pauseMonitor(monitor.monitorId);
    expect(paused).toMatchObject({ paused: true, pausedReason: 'user', nextRunAt: null });
    const updated = await client.updateMonitor(monitor.monitorId, { threshold: 5, name: 'Renamed', webhookUrl: null });
    expect(updated).toMatchObject({ threshold: 5, name: 'Renamed', webhookUrl: null, paused: true });
    const resumed = await client.resumeMonitor(monitor.monitorId);
    expect(resumed).toMatchObject({ paused: false, pausedReason: null });
    expect(resumed.nextRunAt).not.toBeNull();
    await client.pauseMonitor(monitor.monitorId);
  });

  it('refuses bad input naming the field, and creates nothing', async () => {
    const before = (await client.listMonitors()).length;
    const refusal = (body: Parameters<DaguerreClient['createMonitor']>[0]) =>
      client.createMonitor(body).then(
        () => {
          throw new Error('created');
        },
        (error: unknown) => error as DaguerreError,
      );
    const tooOften = await refusal({ url: `${fixtures.url}/changing`, intervalSeconds: 0 });
    expect(tooOften).toBeInstanceOf(DaguerreError);
    expect(tooOften.status).toBe(400);
    expect(JSON.stringify(tooOften.details)).toContain('intervalSeconds');
    const threshold = await refusal({ url: `${fixtures.url}/changing`, intervalSeconds: 60, threshold: 101 });
    expect(threshold.status).toBe(400);
    expect(JSON.stringify(threshold.details)).toContain('threshold');
    const unknown = await refusal({ url: `${fixtures.url}/changing`, intervalSeconds: 60, format: 'pdf' } as never);
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.details)).toContain('format');
    expect(await client.listMonitors()).toHaveLength(before);
  });

  it("another organization's key gets 404; deleteMonitor deletes it", async () => {
    const accounts = service.runtime.accounts;
    const other = await accounts.createOrganization(
      'Other org',
      await accounts.createPlan({ name: `other-${prefix}`, tier: 'test', creditsPerMonth: 10 }),
    );
    const otherKey = await service.runtime.apiKeys.create({ organizationId: other.id, name: 'Other key' });
    const outsider = createClient({ baseUrl: service.url, apiKey: otherKey.key });
    await expect(outsider.getMonitor(monitor.monitorId)).rejects.toMatchObject({ status: 404 });
    await expect(outsider.listRuns(monitor.monitorId)).rejects.toMatchObject({ status: 404 });
    await expect(outsider.pauseMonitor(monitor.monitorId)).rejects.toMatchObject({ status: 404 });
    await expect(outsider.deleteMonitor(monitor.monitorId)).rejects.toMatchObject({ status: 404 });
    expect(await outsider.listMonitors()).toEqual([]);

    await client.deleteMonitor(monitor.monitorId);
    await expect(client.getMonitor(monitor.monitorId)).rejects.toMatchObject({ status: 404 });
    expect((await client.listMonitors()).map((m) => m.monitorId)).not.toContain(monitor.monitorId);
  });
});

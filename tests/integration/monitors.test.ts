import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng } from '../helpers/images.js';
import { monitorApi, WebhookInbox } from '../helpers/monitor-api.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Run {
  runId: string;
  status: 'running' | 'succeeded' | 'failed';
  startedAt: string;
  finishedAt: string | null;
  requestId: string | null;
  credits: number;
  targetStatus: number | null;
  error: { code: string; message: string } | null;
  imageUrl: string | null;
  golden: boolean;
  baselineRunId: string | null;
  diff: {
    diffPercent: number;
    changed: boolean;
    textAdded: string[];
    textRemoved: string[];
    diffImageUrl: string | null;
    regions: unknown[];
  } | null;
}
interface MonitorData {
  monitorId: string;
  paused: boolean;
  pausedReason: 'user' | 'credits' | null;
  nextRunAt: string | null;
  goldenRunId: string | null;
  lastRun: Run | null;
}

/** A page whose colour block and price change on every load. */
const changing = (n: number) => `<!doctype html><html><body style="margin:0;font:18px sans-serif">
<div style="height:220px;background:hsl(${(n * 97) % 360},70%,50%)"></div>
<article><h1>Daily prices</h1><p>The price of the day is ${n} euros per unit.</p><p>This paragraph stays the same on every visit.</p></article></body></html>`;

/** The same page, changing only inside .ad. */
const changingAd = (n: number) => `<!doctype html><html><body style="margin:0;font:18px sans-serif">
<div class="ad" style="height:220px;background:hsl(${(n * 97) % 360},70%,50%)">Advert number ${n}</div>
<article><h1>Terms</h1><p>These terms do not change from one visit to the next.</p><p>Nor does this line.</p></article></body></html>`;

const still = `<!doctype html><html><body style="margin:0;font:18px sans-serif;background:#eef"><article><h1>Still</h1><p>Nothing here ever changes.</p></article></body></html>`;

describe('monitors: scheduled captures compared with their baseline, signed alerts', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let call: ReturnType<typeof monitorApi>;
  const inbox = new WebhookInbox();
  const prefix = `rs-test-mon-${randomBytes(4).toString('hex')}`;
  const counters = new Map<string, number>();
  const next = (path: string) => {
    const n = (counters.get(path) ?? 0) + 1;
    counters.set(path, n);
    return n;
  };
  let slowInFlight = 0;
  let slowMaxInFlight = 0;
  const hook = () => `${fixtures.url}/hook`;
  const view = { viewportWidth: 480, viewportHeight: 360 };

  const runsOf = async (monitorId: string, api = call): Promise<Run[]> => {
    const answer = await api<{ data: { runs: Run[] } }>('GET', `/monitors/${monitorId}/runs?limit=100`);
    expect(answer.status).toBe(200);
    return answer.body.data.runs;
  };
  /** Waits until the monitor has `count` finished runs; answers them oldest first. */
  const finishedRuns = (monitorId: string, count: number, api = call, timeoutMs = 60_000) =>
    until(
      async () => {
        const runs = (await runsOf(monitorId, api)).filter((run) => run.status !== 'running');
        return runs.length >= count ? runs.reverse() : undefined;
      },
      timeoutMs,
      `${count} finished runs of monitor ${monitorId}`,
      150,
    );
  const create = async (body: Record<string, unknown>, api = call): Promise<MonitorData> => {
    const answer = await api<{ data: MonitorData }>('POST', '/monitors', { intervalSeconds: 1, webhookUrl: hook(), ...view, ...body });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body.data;
  };
  const remove = async (monitorId: string, api = call) => expect((await api('DELETE', `/monitors/${monitorId}`)).status).toBe(204);

  beforeAll(async () => {
    fixtures = new FixtureServer()
      .route('/hook', inbox.handler)
      .route('/changing', (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(changing(next('/changing')));
      })
      .route('/changing-ad', (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(changingAd(next('/changing-ad')));
      })
      .page('/still', still)
      .route('/broken', (_req, res) => {
        res.writeHead(500, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<h1>Internal error</h1>');
      })
      .route('/slow', (_req, res) => {
        slowInFlight += 1;
        slowMaxInFlight = Math.max(slowMaxInFlight, slowInFlight);
        // Held open longer than the interval (1 s): a second run would start meanwhile if the lease let it.
        setTimeout(() => {
          slowInFlight -= 1;
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(still);
        }, 2_500);
      });
    await fixtures.start();
    service = await startTestService({
      credits: 10_000,
      env: {
        REDIS_URL,
        JOB_QUEUE_PREFIX: prefix,
        MONITOR_MIN_INTERVAL_SECONDS: '1',
        MONITOR_RECONCILE_INTERVAL_MS: '500',
        MONITOR_WORKERS: '3',
        MONITOR_MAX_PER_ORGANIZATION: '2',
        MONITOR_RUNS_KEPT: '5',
        WEBHOOK_RETRY_BASE_MS: '200',
        RATE_LIMIT_MAX: '1000',
      },
    });
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'monitors' });
    inbox.trust(key.signingSecret);
    call = monitorApi(service.url, key.key);
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('a page that changes: monitor.changed, signed, with the percent past the threshold, the text added and removed, and the three images', async () => {
    const monitor = await create({ url: `${fixtures.url}/changing`, threshold: 5, name: 'prices' });
    expect(monitor).toMatchObject({ paused: false, pausedReason: null, goldenRunId: null });
    const event = await until(() => inbox.of(monitor.monitorId, 'monitor.changed')[0], 60_000, 'monitor.changed');
    await remove(monitor.monitorId);
    expect(inbox.unverified).toEqual([]);
    expect(event.id).toBe(`msg_mon_${event.data.run!.runId}`);
    expect(event.data).toMatchObject({ monitorId: monitor.monitorId, name: 'prices', url: `${fixtures.url}/changing` });
    const run = event.data.run!;
    expect(run.status).toBe('succeeded');
    expect(run.credits).toBe(1);
    expect(run.diff!.changed).toBe(true);
    expect(run.diff!.diffPercent).toBeGreaterThan(5);
    expect(run.diff!.textAdded.join('\n')).toMatch(/The price of the day is \d+ euros per unit\./);
    expect(run.diff!.textRemoved.join('\n')).toMatch(/The price of the day is \d+ euros per unit\./);
    expect(run.diff!.textAdded.join('\n')).not.toContain('stays the same');
    expect(run.baselineRunId).toBeTruthy();
    const { newUrl, baselineUrl, diffUrl } = event.data.images!;
    for (const url of [newUrl, baselineUrl, diffUrl]) {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/monitors\//);
    }
  });

  it("a run's capture and diff image are PNGs served to the organization; the run's capture is in the request log as kind monitor", async () => {
    const monitor = await create({ url: `${fixtures.url}/changing`, threshold: 5 });
    const runs = await finishedRuns(monitor.monitorId, 2);
    await call('PATCH', `/monitors/${monitor.monitorId}`, { paused: true });
    const second = runs[1]!;
    expect(second.diff?.diffImageUrl).toBeTruthy();
    const key = service.apiKey;
    for (const url of [second.imageUrl!, second.diff!.diffImageUrl!]) {
      const response = await fetch(url, { headers: { 'x-api-key': key } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      const png = decodePng(Buffer.from(await response.arrayBuffer()));
      expect(png.width).toBe(480);
    }
    expect((await fetch(second.imageUrl!)).status).toBe(401);
    const ledger = await service.runtime.db.knex('capture_ledger').where('request_id', second.requestId!).first('kind', 'status');
    expect(ledger).toMatchObject({ kind: 'monitor', status: 'charged' });
    await remove(monitor.monitorId);
  });

  it('a page that does not change: runs with no change, and no alert', async () => {
    const monitor = await create({ url: `${fixtures.url}/still`, threshold: 0.5 });
    const runs = await finishedRuns(monitor.monitorId, 3);
    await remove(monitor.monitorId);
    expect(runs.map((run) => run.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(runs[0]!.diff).toBeNull();
    for (const run of runs.slice(1))
      expect(run.diff).toMatchObject({ diffPercent: 0, changed: false, textAdded: [], textRemoved: [], diffImageUrl: null });
    expect(inbox.of(monitor.monitorId)).toEqual([]);
  });

  it('a change only inside ignoreSelectors: no change counted, no alert', async () => {
    const monitor = await create({ url: `${fixtures.url}/changing-ad`, threshold: 0.1, ignoreSelectors: ['.ad'] });
    const runs = await finishedRuns(monitor.monitorId, 3);
    await remove(monitor.monitorId);
    for (const run of runs.slice(1)) expect(run.diff).toMatchObject({ diffPercent: 0, changed: false, textAdded: [], textRemoved: [] });
    expect(inbox.of(monitor.monitorId)).toEqual([]);
  });

  it('a target answering 500: monitor.failed, the run failed with its status, not charged', async () => {
    const before = await service.runtime.credits.balance(service.organizationId);
    const monitor = await create({ url: `${fixtures.url}/broken` });
    const event = await until(() => inbox.of(monitor.monitorId, 'monitor.failed')[0], 60_000, 'monitor.failed');
    await remove(monitor.monitorId);
    const run = event.data.run!;
    expect(run).toMatchObject({ status: 'failed', credits: 0, targetStatus: 500, error: { code: 'TARGET_HTTP_ERROR' } });
    const ledger = await service.runtime.db
      .knex('capture_ledger')
      .where('request_id', run.requestId ?? '')
      .first('status');
    expect(ledger?.status ?? 'released').not.toBe('charged');
    const after = await service.runtime.credits.balance(service.organizationId);
    // Other monitors of the suite are deleted: nothing else charged meanwhile.
    expect(after!.used).toBe(before!.used);
  });

  it('never two runs of a monitor at once: a page held open longer than the interval', async () => {
    slowMaxInFlight = 0;
    const monitor = await create({ url: `${fixtures.url}/slow` });
    const runs = await finishedRuns(monitor.monitorId, 3);
    await remove(monitor.monitorId);
    expect(slowMaxInFlight).toBe(1);
    for (let i = 1; i < runs.length; i++)
      expect(Date.parse(runs[i]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(runs[i - 1]!.finishedAt!));
    expect(runs.every((run) => run.status === 'succeeded')).toBe(true);
  });

  it("fairness: one organization's many monitors hold at most MONITOR_MAX_PER_ORGANIZATION runs; another's monitor still runs meanwhile", async () => {
    const many: MonitorData[] = [];
    for (let i = 0; i < 5; i++) many.push(await create({ url: `${fixtures.url}/slow`, webhookUrl: undefined }));
    const plan = await service.runtime.accounts.createPlan({ name: `fair-${Date.now()}`, tier: 'test', creditsPerMonth: 1_000 });
    const org = await service.runtime.accounts.createOrganization('Other org', plan);
    const other = monitorApi(service.url, (await service.runtime.apiKeys.create({ organizationId: org.id, name: 'fair' })).key);
    const theirs = await create({ url: `${fixtures.url}/still`, webhookUrl: undefined }, other);
    // Two runs of the other organization while the first one's five monitors keep the worker busy.
    await finishedRuns(theirs.monitorId, 2, other, 45_000);
    const now = Date.now();
    const spans = (await Promise.all(many.map((monitor) => runsOf(monitor.monitorId))))
      .flat()
      .map((run) => [Date.parse(run.startedAt), run.finishedAt ? Date.parse(run.finishedAt) : now] as const);
    for (const monitor of many) await remove(monitor.monitorId);
    await remove(theirs.monitorId, other);
    // The most runs of the first organization under way at one moment, from the runs' own records.
    const edges = spans.flatMap(([start, end]) => [[start, 1] as const, [end, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let under = 0;
    let most = 0;
    for (const [, step] of edges) most = Math.max(most, (under += step));
    expect(spans.length).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);
  }, 90_000);

  it('PATCH paused: no runs while paused (the schedule is gone from Redis), runs again once resumed', async () => {
    const monitor = await create({ url: `${fixtures.url}/still` });
    await finishedRuns(monitor.monitorId, 1);
    const paused = await call<{ data: MonitorData }>('PATCH', `/monitors/${monitor.monitorId}`, { paused: true });
    expect(paused.body.data).toMatchObject({ paused: true, pausedReason: 'user', nextRunAt: null });
    expect(await service.runtime.monitors!.schedule.queue.getJobScheduler(monitor.monitorId)).toBeUndefined();
    // A clock that is not a sleep: another monitor's runs go on meanwhile.
    const runsWhenPaused = (
      await until(
        async () => {
          const runs = await runsOf(monitor.monitorId);
          return runs.every((run) => run.status !== 'running') ? runs : undefined;
        },
        30_000,
        'the last run to end',
      )
    ).length;
    const clock = await create({ url: `${fixtures.url}/still`, webhookUrl: undefined });
    await finishedRuns(clock.monitorId, 3);
    await remove(clock.monitorId);
    expect((await runsOf(monitor.monitorId)).length).toBe(runsWhenPaused);
    // Resumed: scheduled again, and runs.
    const resumed = await call<{ data: MonitorData }>('PATCH', `/monitors/${monitor.monitorId}`, { paused: false });
    expect(resumed.body.data).toMatchObject({ paused: false, pausedReason: null });
    await finishedRuns(monitor.monitorId, runsWhenPaused + 2);
    await remove(monitor.monitorId);
  });

  it('a golden run pinned: later runs are compared with it, not with the run before', async () => {
    const monitor = await create({ url: `${fixtures.url}/changing`, threshold: 5, webhookUrl: undefined });
    const first = (await finishedRuns(monitor.monitorId, 2))[0]!;
    const pinned = await call<{ data: Run }>('POST', `/monitors/${monitor.monitorId}/runs/${first.runId}/golden`);
    expect(pinned.status).toBe(200);
    expect(pinned.body.data).toMatchObject({ runId: first.runId, golden: true });
    const pinnedAt = Date.now();
    const later = await until(
      async () => {
        const found = (await runsOf(monitor.monitorId)).filter((run) => run.status === 'succeeded' && Date.parse(run.startedAt) > pinnedAt);
        return found.length >= 2 ? found : undefined;
      },
      60_000,
      'two runs after the pin',
    );
    for (const run of later) expect(run.baselineRunId).toBe(first.runId);
    const got = await call<{ data: MonitorData }>('GET', `/monitors/${monitor.monitorId}`);
    expect(got.body.data.goldenRunId).toBe(first.runId);
    // A failed or unknown run cannot be pinned.
    expect((await call('POST', `/monitors/${monitor.monitorId}/runs/00000000-0000-4000-8000-000000000000/golden`)).status).toBe(404);
    await remove(monitor.monitorId);
  });

  it('MONITOR_RUNS_KEPT: old runs and their files go, the golden run stays', async () => {
    const monitor = await create({ url: `${fixtures.url}/still`, webhookUrl: undefined });
    const [first, second] = await finishedRuns(monitor.monitorId, 2);
    await call('POST', `/monitors/${monitor.monitorId}/runs/${first!.runId}/golden`);
    // Kept: 5 besides the golden one; the second run goes once 5 newer ones ended.
    await until(
      async () => ((await runsOf(monitor.monitorId)).some((run) => run.runId === second!.runId) ? undefined : true),
      60_000,
      'the second run pruned',
    );
    const runs = await runsOf(monitor.monitorId);
    expect(runs.filter((run) => run.status !== 'running').length).toBeLessThanOrEqual(7);
    expect(runs.some((run) => run.runId === first!.runId && run.golden)).toBe(true);
    expect((await fetch(first!.imageUrl!, { headers: { 'x-api-key': service.apiKey } })).status).toBe(200);
    // The pruned run's file went with it.
    const folder = join(service.runtime.config.RESULTS_DIR, 'monitors', monitor.monitorId);
    expect(existsSync(join(folder, `${second!.runId}.png`))).toBe(false);
    expect(existsSync(join(folder, `${first!.runId}.png`))).toBe(true);
    await remove(monitor.monitorId);
  }, 90_000);

  it("out of credits: the organization's monitors pause with monitor.paused; credits granted: resumed with monitor.resumed", async () => {
    const plan = await service.runtime.accounts.createPlan({ name: `poor-${Date.now()}`, tier: 'test', creditsPerMonth: 2 });
    const org = await service.runtime.accounts.createOrganization('Poor org', plan);
    const key = await service.runtime.apiKeys.create({ organizationId: org.id, name: 'poor' });
    inbox.trust(key.signingSecret);
    const poor = monitorApi(service.url, key.key);
    const monitor = await create({ url: `${fixtures.url}/still` }, poor);
    const paused = await until(() => inbox.of(monitor.monitorId, 'monitor.paused')[0], 60_000, 'monitor.paused');
    expect(paused.data.reason).toContain('credits');
    const state = await poor<{ data: MonitorData }>('GET', `/monitors/${monitor.monitorId}`);
    expect(state.body.data).toMatchObject({ paused: true, pausedReason: 'credits', nextRunAt: null });
    const runs = await runsOf(monitor.monitorId, poor);
    expect(runs.filter((run) => run.status === 'succeeded')).toHaveLength(2);
    const refusedRun = runs.find((run) => run.error?.code === 'INSUFFICIENT_CREDITS');
    expect(refusedRun).toMatchObject({ status: 'failed', credits: 0 });
    // The refusal is in the request log (GET /captures) as the monitor's.
    const logged = await service.runtime.db
      .knex('capture_ledger')
      .where('request_id', refusedRun!.requestId!)
      .first('status', 'kind', 'error_code');
    expect(logged).toMatchObject({ status: 'refused', kind: 'monitor', error_code: 'INSUFFICIENT_CREDITS' });
    // A refusal for credits is not a failure of the target: no monitor.failed.
    expect(inbox.of(monitor.monitorId, 'monitor.failed')).toEqual([]);

    await service.runtime.credits.grant(org.id, 5);
    const resumed = await until(() => inbox.of(monitor.monitorId, 'monitor.resumed')[0], 30_000, 'monitor.resumed');
    expect(resumed.data.reason).toContain('credits');
    const succeededBefore = runs.filter((run) => run.status === 'succeeded').length;
    await until(
      async () =>
        (await runsOf(monitor.monitorId, poor)).filter((run) => run.status === 'succeeded').length > succeededBefore ? true : undefined,
      30_000,
      'a run after the resume',
    );
    await remove(monitor.monitorId, poor);
    // Every event has an id of its own (webhook-id): none delivered twice as two events.
    const ids = inbox.events.map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

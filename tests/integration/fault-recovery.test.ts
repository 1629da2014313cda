import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnService, seedOrganization, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { openDatabase } from '../../server/src/store/database.js';

const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';
/** Short deadlines so that stale reservations age quickly. */
const CAPTURE_TIMEOUT_MS = 4_000;
const SWEEP_ENV = {
  MAX_ORG_SHARE_PERCENT: '100',
  CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS),
  STALE_RESERVATION_MARGIN_MS: '1000',
  CREDIT_SWEEP_INTERVAL_MS: '1000',
  RATE_LIMIT_MAX: '1000',
};
/** The bound: /usage right again within the capture deadline plus 30 s of a crash. */
const RECOVERY_BOUND_MS = CAPTURE_TIMEOUT_MS + 30_000;

interface Usage {
  credits: { remaining: number; usedThisPeriod: number };
}

const usage = async (url: string, apiKey: string) =>
  (await (await fetch(`${url}/usage`, { headers: { 'x-api-key': apiKey } })).json()) as Usage;
const capture = (url: string, apiKey: string, params: Record<string, string>) =>
  fetch(`${url}/capture?${new URLSearchParams({ viewportWidth: '200', viewportHeight: '150', ...params })}`, {
    headers: { 'x-api-key': apiKey },
  });

/** Polls /usage until it shows `remaining`; returns how long that took. */
async function usageSettles(url: string, apiKey: string, remaining: number, boundMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const report = await usage(url, apiKey);
    if (report.credits.remaining === remaining) return Date.now() - started;
    if (Date.now() - started > boundMs) throw new Error(`/usage still shows ${JSON.stringify(report.credits)} after ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('fault recovery: SIGKILL with captures in flight, shutdown past grace', () => {
  let fixtures: FixtureServer;
  const children: ChildService[] = [];
  const databases: TestDatabase[] = [];

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    // Answers only after a minute: captures stay in flight until the fault.
    fixtures.route('/hang', (_req, res) => {
      const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(OK_PAGE), 60_000);
      res.on('close', () => clearTimeout(timer));
    });
    fixtures.route('/slow', (_req, res) => {
      const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(OK_PAGE), 3_000);
      res.on('close', () => clearTimeout(timer));
    });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      await child.stop();
      child.reapOrphans();
    }
  });
  afterAll(async () => {
    for (const database of databases) await database.drop();
    await fixtures?.stop();
  });

  const hangUrl = () => `${fixtures.url}/hang`;
  const egressEnv = () => ({ EGRESS_ALLOW_LIST: new URL(fixtures.url).host });

  /** Two captures in flight on `child`, both reserved, then SIGKILL of the service process. */
  async function killWithCapturesInFlight(child: ChildService, apiKey: string): Promise<number> {
    fixtures.reset();
    const inFlight = [capture(child.url, apiKey, { url: hangUrl() }), capture(child.url, apiKey, { url: hangUrl() })].map((p) =>
      p.then(
        (r) => r.status,
        () => 'connection closed',
      ),
    );
    for (let i = 0; i < 400 && fixtures.requestsTo('/hang').length < 2; i++) await new Promise((r) => setTimeout(r, 25));
    expect(fixtures.requestsTo('/hang')).toHaveLength(2);
    const killedAt = Date.now();
    await child.kill();
    expect(await Promise.all(inFlight)).toEqual(['connection closed', 'connection closed']);
    child.reapOrphans();
    return killedAt;
  }

  it('SQLite: after a SIGKILL and a quick restart the new process sweeps the stranded reservations while it runs', async () => {
    const database = await createTestDatabase('sqlite');
    databases.push(database);
    const { apiKey } = await seedOrganization(database.url, 2);
    const first = await spawnService({ DATABASE_URL: database.url, ...SWEEP_ENV, ...egressEnv() });
    children.push(first);
    const killedAt = await killWithCapturesInFlight(first, apiKey);

    // Restarted at once, as systemd would: the reservations are younger than the stale age (a
    // longer margin here, 14 s in all), so the start-up sweep leaves them and only the running
    // sweeper can give them back.
    const second = await spawnService({ DATABASE_URL: database.url, ...SWEEP_ENV, STALE_RESERVATION_MARGIN_MS: '10000', ...egressEnv() });
    children.push(second);
    const listeningAt = Date.now();
    await usageSettles(second.url, apiKey, 2, RECOVERY_BOUND_MS - (Date.now() - killedAt));
    const db = openDatabase(database.url);
    const rows = (await db.knex('capture_ledger').select('status', 'error_code', 'finished_at')) as Array<{
      status: string;
      error_code: string;
      finished_at: number;
    }>;
    await db.close();
    expect(rows.map((row) => [row.status, row.error_code])).toEqual([
      ['released', 'STALE_RESERVATION'],
      ['released', 'STALE_RESERVATION'],
    ]);
    // Released by the process while it served requests, not by its start-up.
    for (const row of rows) expect(Number(row.finished_at)).toBeGreaterThanOrEqual(listeningAt - 50);
    const response = await capture(second.url, apiKey, { html: OK_PAGE });
    expect(response.status).toBe(200);
    expect((await usage(second.url, apiKey)).credits).toMatchObject({ remaining: 1, usedThisPeriod: 1 });
  });

  it('MariaDB, two instances: the survivor sweeps the reservations of the instance that was killed', async () => {
    const survivor: TestService = await startTestService({ database: 'mysql', credits: 2, env: SWEEP_ENV });
    try {
      const other = await spawnService({ DATABASE_URL: survivor.database.url, ...SWEEP_ENV, ...egressEnv() });
      children.push(other);
      const killedAt = await killWithCapturesInFlight(other, survivor.apiKey);
      expect((await usage(survivor.url, survivor.apiKey)).credits.remaining).toBeLessThan(2);
      await usageSettles(survivor.url, survivor.apiKey, 2, RECOVERY_BOUND_MS - (Date.now() - killedAt));
      const ledger = (await survivor.runtime.credits.ledger(survivor.organizationId)) as Array<{
        status: string;
        error_code: string | null;
      }>;
      expect(ledger.map((row) => [row.status, row.error_code])).toEqual([
        ['released', 'STALE_RESERVATION'],
        ['released', 'STALE_RESERVATION'],
      ]);
      const response = await capture(survivor.url, survivor.apiKey, { html: OK_PAGE });
      expect(response.status).toBe(200);
      expect((await usage(survivor.url, survivor.apiKey)).credits).toMatchObject({ remaining: 1, usedThisPeriod: 1 });
    } finally {
      await survivor.stop();
    }
  });

  it('sweeps concurrently from several instances without double-releasing a row', async () => {
    const a = await startTestService({ database: 'mysql', credits: 0, env: { ...SWEEP_ENV, CREDIT_SWEEP_INTERVAL_MS: '3600000' } });
    const b = await startTestService({ databaseUrl: a.database.url, env: { ...SWEEP_ENV, CREDIT_SWEEP_INTERVAL_MS: '3600000' } });
    try {
      await a.runtime.credits.grant(a.organizationId, 20);
      for (let i = 0; i < 20; i++) {
        const requestId = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
        await a.runtime.credits.reserve(
          { requestId, organizationId: a.organizationId, apiKeyId: null, format: 'png', source: 'html', targetHost: null, userAgent: null },
          1,
        );
      }
      await a.runtime.db
        .knex('capture_ledger')
        .where('status', 'reserved')
        .update({ created_at: Date.now() - 3_600_000 });
      const released = await Promise.all(
        [a, b, a, b].map((s) => s.runtime.credits.releaseStaleReservations({ marginMs: 15_000, olderThanMs: 60_000 })),
      );
      expect(released.reduce((sum, n) => sum + n, 0)).toBe(20);
      expect(await a.runtime.credits.balance(a.organizationId)).toMatchObject({ remaining: 20, reserved: 0, used: 0 });
    } finally {
      await b.runtime.stop();
      await a.stop();
    }
  });

  it('shutdown past its grace period answers 503 SERVICE_UNAVAILABLE with Retry-After to each in-flight capture', async () => {
    const service = await startTestService({
      env: { SHUTDOWN_TIMEOUT_MS: '300', MAX_CONCURRENCY: '3', RATE_LIMIT_MAX: '1000', MAX_ORG_SHARE_PERCENT: '100' },
    });
    const responses = [1, 2, 3].map(() =>
      capture(service.url, service.apiKey, { url: `${fixtures.url}/hang` }).then(async (r) => ({
        status: r.status,
        retryAfter: r.headers.get('retry-after'),
        body: await r.json(),
      })),
    );
    fixtures.reset();
    for (let i = 0; i < 400 && fixtures.requestsTo('/hang').length < 3; i++) await new Promise((r) => setTimeout(r, 25));
    await service.runtime.stop();
    for (const response of await Promise.all(responses)) {
      expect(response.status).toBe(503);
      expect(response.retryAfter).toMatch(/^\d+$/);
      expect(response.body).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE' } });
    }
    const reopened = openDatabase(service.database.url);
    const statuses = (await reopened.knex('capture_ledger').select('status')).map((row) => row.status as string);
    await reopened.close();
    await service.database.drop();
    expect(statuses).toEqual(['released', 'released', 'released']);
  });
});

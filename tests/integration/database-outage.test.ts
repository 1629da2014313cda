import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { PrivateMariaDb } from '../helpers/private-mariadb.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';
const CAPTURE_TIMEOUT_MS = 6_000;

interface Usage {
  credits: { remaining: number; usedThisPeriod: number };
}

/** A MariaDB of the test's own, killed by pid mid-capture: 503s, never a 500, a 401 or a free capture. */
describe('database outage mid-capture (a private MariaDB killed by pid)', () => {
  let mariadb: PrivateMariaDb;
  let fixtures: FixtureServer;
  let service: TestService;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.route('/slow', (_req, res) => {
      const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(OK_PAGE), 2_000);
      res.on('close', () => clearTimeout(timer));
    });
    mariadb = await new PrivateMariaDb().init();
    await mariadb.start();
    const url = await mariadb.createDatabase('daguerre_outage');
    service = await startTestService({
      databaseUrl: url,
      credits: 5,
      env: {
        MAX_ORG_SHARE_PERCENT: '100',
        CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS),
        STALE_RESERVATION_MARGIN_MS: '1000',
        CREDIT_SWEEP_INTERVAL_MS: '1000',
        RATE_LIMIT_MAX: '1000',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    await mariadb?.destroy();
    await fixtures?.stop();
  });

  const capture = (params: Record<string, string>) =>
    fetch(`${service.url}/capture?${new URLSearchParams({ viewportWidth: '200', viewportHeight: '150', ...params })}`, {
      headers: { 'x-api-key': service.apiKey },
    });
  const usage = async () => {
    const response = await fetch(`${service.url}/usage`, { headers: { 'x-api-key': service.apiKey } });
    return { status: response.status, body: (await response.json()) as Usage };
  };

  it('answers 503 SERVICE_UNAVAILABLE to captures in flight and to new requests, and recovers without a restart', async () => {
    fixtures.reset();
    const inFlight = [capture({ url: `${fixtures.url}/slow` }), capture({ url: `${fixtures.url}/slow` })];
    for (let i = 0; i < 400 && fixtures.requestsTo('/slow').length < 2; i++) await new Promise((r) => setTimeout(r, 25));
    expect(fixtures.requestsTo('/slow')).toHaveLength(2);
    await mariadb.kill();

    for (const response of await Promise.all(inFlight)) {
      const body = (await response.json()) as { error: { code: string } };
      expect([response.status, body.error.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    // While the database is down: 503 for a new capture and for /usage, never a 401 or a free capture.
    const during = await capture({ html: OK_PAGE });
    expect(during.status).toBe(503);
    expect((await usage()).status).toBe(503);
    // The public /ready says the database does not answer, never where it is (docs/security.md).
    const ready = await fetch(`${service.url}/ready`);
    const readyText = await ready.text();
    expect(ready.status).toBe(503);
    expect(JSON.parse(readyText)).toMatchObject({ checks: { database: { ok: false, error: 'the database does not answer' } } });
    for (const text of [readyText, await (await fetch(`${service.url}/health`)).text()]) {
      expect(text).not.toContain('127.0.0.1');
      expect(text).not.toContain(String(mariadb.port));
    }

    await mariadb.start();
    // The releases failed during the outage; the sweeper gives both credits back while the service runs.
    const until = Date.now() + CAPTURE_TIMEOUT_MS + 30_000;
    let report = await usage();
    while (!(report.status === 200 && report.body.credits.remaining === 5) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 250));
      report = await usage();
    }
    expect(report.status).toBe(200);
    expect(report.body.credits).toMatchObject({ remaining: 5, usedThisPeriod: 0 });
    const after = await capture({ html: OK_PAGE });
    expect(after.status).toBe(200);
    expect((await usage()).body.credits).toMatchObject({ remaining: 4, usedThisPeriod: 1 });
  });
});

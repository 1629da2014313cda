import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/src/store/database.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { capturedLogLines, startTestService, type TestService } from '../helpers/test-service.js';

const TINY = encodeURIComponent('<p>ops</p>');

/** Pids of every live process whose command line mentions the given user-data dir or binary. */
function chromiumChildrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return children;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('operations', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ database: 'sqlite' });
  });
  afterAll(async () => service?.stop());

  it('/health answers while the process lives; /ready checks browser, database and queue', async () => {
    const health = await service.get('/health');
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    const ready = await service.get('/ready');
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { status: string; checks: Record<string, { ok: boolean }> };
    expect(body.status).toBe('ready');
    expect(Object.keys(body.checks).sort()).toEqual(['browser', 'database', 'queue', 'sandbox', 'shutdown']);
    for (const check of Object.values(body.checks)) expect(check.ok).toBe(true);
    // Chromium's own sandbox is on here (docs/security.md); an operator's opt-out would show mode "off".
    expect(body.checks.sandbox).toEqual({ ok: true, mode: 'on' });
  });

  it('returns one request id in the header, the JSON result and the logs; Server-Timing has the stages', async () => {
    const response = await service.get(
      `/capture?html=${TINY}&returnFile=false&viewportWidth=200&viewportHeight=100&apiKey=${service.apiKey}`,
    );
    const body = (await response.json()) as { data: { requestId: string } };
    const requestId = response.headers.get('x-request-id');
    expect(body.data.requestId).toBe(requestId);
    const timing = response.headers.get('server-timing') ?? '';
    for (const stage of ['queue', 'navigate', 'capture']) expect(timing).toMatch(new RegExp(`${stage};dur=\\d+`));
    await new Promise((r) => setTimeout(r, 50));
    const lines = capturedLogLines.filter((line) => line.includes(requestId!));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line).requestId).toBe(requestId);
  });

  it('never writes the API key or other query secrets into a log line', async () => {
    await service.get(
      `/capture?html=${TINY}&viewportWidth=200&viewportHeight=100&apiKey=${service.apiKey}&openaiApiKey=sk-leak-canary-123&openaiPrompt=x`,
    );
    await service.get(`/usage?apiKey=${service.apiKey}`);
    await new Promise((r) => setTimeout(r, 50));
    const all = capturedLogLines.join('\n');
    expect(all).not.toContain(service.apiKey);
    expect(all).not.toContain('sk-leak-canary-123');
    expect(all).toContain('[REDACTED]');
  });

  it('exposes Prometheus metrics for captures, stages, queue, browser and credits', async () => {
    expect((await service.get(`/capture?html=x&format=bmp&apiKey=${service.apiKey}`)).status).toBe(400);
    const text = await (await service.get('/metrics')).text();
    expect(text).toMatch(/daguerre_captures_total\{status="200",format="png",cache="none"\} \d+/);
    expect(text).toMatch(/daguerre_capture_stage_seconds_bucket\{le="[^"]+",stage="navigate"\}/);
    expect(text).toContain('daguerre_queue_depth');
    expect(text).toContain('daguerre_browser_restarts_total');
    expect(text).toMatch(/daguerre_credits_charged_total \d+/);
    expect(text).toMatch(/daguerre_render_errors_total\{code="VALIDATION_ERROR"\} \d+/);
  });
});

describe('graceful shutdown', () => {
  let fixtures: FixtureServer;
  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.route('/slow', (_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<body style="background:#0a0">slow</body>'), 2_500);
    });
  });
  afterAll(async () => fixtures.stop());

  it('finishes in-flight captures, then closes Chromium without leaving a process behind', async () => {
    const service = await startTestService({ env: { SHUTDOWN_TIMEOUT_MS: '15000' } });
    const browserPid = service.runtime.browser.pid()!;
    expect(alive(browserPid)).toBe(true);
    const inFlight = service.get(
      `/capture?url=${encodeURIComponent(`${fixtures.url}/slow`)}&apiKey=${service.apiKey}&viewportWidth=200&viewportHeight=100`,
    );
    await new Promise((r) => setTimeout(r, 800));
    const stopped = service.stop();
    const response = await inFlight;
    expect(response.status).toBe(200);
    await stopped;
    expect(alive(browserPid)).toBe(false);
    expect(chromiumChildrenOf(browserPid)).toEqual([]);
  });

  it('aborts captures still running after the grace period and releases their credits', async () => {
    const service = await startTestService({ env: { SHUTDOWN_TIMEOUT_MS: '300' } });
    const inFlight = service
      .get(`/capture?url=${encodeURIComponent(`${fixtures.url}/slow`)}&apiKey=${service.apiKey}&viewportWidth=200&viewportHeight=100`)
      .then(
        (r) => r.status,
        () => 'connection closed',
      );
    await new Promise((r) => setTimeout(r, 800));
    const during = await service.runtime.credits.ledger(service.organizationId);
    expect(during.map((row) => row.status)).toEqual(['reserved']);
    await service.runtime.stop();
    expect(await inFlight).not.toBe(200);
    // The database file outlives the service: the reservation was released before it closed.
    const reopened = openDatabase(service.database.url);
    const after = await reopened.knex('capture_ledger').select('status');
    await reopened.close();
    await service.database.drop();
    expect(after.map((row) => row.status)).toEqual(['released']);
  });
});

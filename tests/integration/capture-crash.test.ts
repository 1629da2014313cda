import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';

interface LedgerRow {
  request_id: string;
  status: string;
}

/** Browser crash, a full queue and a client that leaves: each fails cleanly, charges nothing, and the next capture works. */
describe('capture robustness: browser crash, full queue, client disconnect', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    // Answers after `ms` (default 1500 ms).
    fixtures.route('/slow', (req, res) => {
      const ms = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 1_500);
      const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(OK_PAGE), ms);
      res.on('close', () => clearTimeout(timer));
    });
    service = await startTestService({ env: { MAX_CONCURRENCY: '1', MAX_QUEUE: '1', RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const query = (params: Record<string, string>) => `/capture?${new URLSearchParams({ ...params, apiKey: service.apiKey })}`;
  const ledger = async () => (await service.runtime.credits.ledger(service.organizationId, 500)) as LedgerRow[];
  /** Until the one slot is back in the pool (its reset after the last capture is done). */
  const poolIdle = async () => {
    for (let i = 0; i < 200 && (service.runtime.pool.busy > 0 || service.runtime.pool.waiting > 0); i++)
      await new Promise((r) => setTimeout(r, 25));
  };
  const expectCaptureWorks = async () => {
    const image = decodePng((await service.client.capture({ html: OK_PAGE, viewportWidth: 200, viewportHeight: 150 })).bytes);
    expect(near(image.pixel(100, 75), [40, 160, 110])).toBe(true);
  };

  it('answers 500 OPERATION_FAILED when Chromium dies mid-capture, charges nothing, and relaunches for the next one', async () => {
    await poolIdle();
    const before = await service.client.usage();
    const pid = service.runtime.browser.pid();
    expect(pid).toBeGreaterThan(0);
    fixtures.reset();
    const pending = service.get(query({ url: `${fixtures.url}/slow?ms=10000`, viewportWidth: '200', viewportHeight: '150' }));
    await fixtures.waitForRequest('/slow');
    process.kill(pid!, 'SIGKILL');
    const response = await pending;
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('OPERATION_FAILED');
    expect(body.error.message).toMatch(/browser/i);
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);

    await expectCaptureWorks();
    expect(service.runtime.browser.pid()).not.toBe(pid);
    expect(service.runtime.browser.crashes).toBeGreaterThanOrEqual(1);
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining - 1);
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After when the slot is busy and the queue is full', async () => {
    await poolIdle();
    const before = await service.client.usage();
    const url = `${fixtures.url}/slow?ms=2500`;
    const responses = await Promise.all(
      Array.from({ length: 4 }, (_, i) => service.get(query({ url: `${url}&n=${i}`, viewportWidth: '200', viewportHeight: '150' }))),
    );
    const statuses = responses.map((r) => r.status).sort();
    // One runs, one waits in the queue, two are turned away at once.
    expect(statuses).toEqual([200, 200, 503, 503]);
    for (const response of responses.filter((r) => r.status === 503)) {
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      const body = (await response.json()) as { success: boolean; error: { code: string; message: string } };
      expect(body.success).toBe(false);
      expect(body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(body.error.message).toMatch(/retry/i);
    }
    for (const response of responses.filter((r) => r.status === 200)) await response.arrayBuffer();
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining - 2);
  });

  it('charges nothing when the client disconnects during the capture (ledger: released)', async () => {
    await poolIdle();
    const before = await service.client.usage();
    const rowsBefore = new Set((await ledger()).map((row) => row.request_id));
    fixtures.reset();
    const controller = new AbortController();
    const pending = service.get(query({ url: `${fixtures.url}/slow?ms=3000`, viewportWidth: '200', viewportHeight: '150' }), {
      signal: controller.signal,
    });
    await fixtures.waitForRequest('/slow');
    controller.abort();
    await expect(pending).rejects.toThrow();

    // The capture stops and its reservation is released, not charged.
    let row: LedgerRow | undefined;
    for (let i = 0; i < 100; i++) {
      row = (await ledger()).find((r) => !rowsBefore.has(r.request_id));
      if (row && row.status !== 'reserved') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(row?.status).toBe('released');
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
    await expectCaptureWorks();
  });

  it('gives the slot back when a client leaves while its capture waits in the queue', async () => {
    await poolIdle();
    fixtures.reset();
    const running = service.get(query({ url: `${fixtures.url}/slow?ms=1500&n=running`, viewportWidth: '200', viewportHeight: '150' }));
    await fixtures.waitForRequest('/slow');
    const controller = new AbortController();
    const queued = service.get(query({ html: OK_PAGE, viewportWidth: '200', viewportHeight: '150' }), { signal: controller.signal });
    // Queued in front of the pool (the fair-share queue), as /ready reports it.
    const queuedNow = async () =>
      ((await (await fetch(`${service.url}/ready`)).json()) as { checks: { queue: { waiting: number } } }).checks.queue.waiting;
    for (let i = 0; i < 100 && (await queuedNow()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await queuedNow()).toBe(1);
    controller.abort();
    await expect(queued).rejects.toThrow();
    expect((await running).status).toBe(200);
    // The one slot serves the next capture at once instead of staying with the departed request.
    const started = Date.now();
    await expectCaptureWorks();
    expect(Date.now() - started).toBeLessThan(10_000);
    await poolIdle();
    expect(service.runtime.pool.busy).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng } from '../helpers/images.js';
import { captureQuery, startTestService, type TestService } from '../helpers/test-service.js';

/** A page made unique per test, so entries of one test never answer another. */
const page = (label: string) =>
  `<html><body style="margin:0;background:rgb(20,160,90)"><h1>${label} ${Date.now()}-${Math.random()}</h1></body></html>`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('response caching', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer()
      .route('/slow', (_req, res) => {
        // Slow enough that five concurrent requests overlap the first one's render.
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end('<html><body style="background:rgb(200,120,0)"><h1>slow page</h1></body></html>');
        }, 600);
      })
      .start();
    service = await startTestService({ credits: 100 });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const capture = (params: Record<string, string | number | boolean>, apiKey = service.apiKey) =>
    service.get(`/capture?${captureQuery(params)}`, { headers: { 'x-api-key': apiKey } });

  it('serves a hit with identical bytes and headers, X-Cache MISS then HIT, no credit, a cache_hit ledger row', async () => {
    const params = { html: page('hit'), viewportWidth: 320, viewportHeight: 240, cacheEnabled: true };
    const before = await service.client.usage();
    const miss = await capture(params);
    expect(miss.status).toBe(200);
    expect(miss.headers.get('x-cache')).toBe('MISS');
    const missBytes = Buffer.from(await miss.arrayBuffer());
    const afterMiss = await service.client.usage();
    expect(afterMiss.credits.usedThisPeriod).toBe(before.credits.usedThisPeriod + 1);

    const hit = await capture(params);
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-cache')).toBe('HIT');
    const hitBytes = Buffer.from(await hit.arrayBuffer());
    expect(hitBytes.equals(missBytes)).toBe(true);
    for (const header of ['content-type', 'content-disposition', 'content-length'])
      expect(hit.headers.get(header)).toBe(miss.headers.get(header));
    // A new request: its own id, not the first one's.
    expect(hit.headers.get('x-request-id')).not.toBe(miss.headers.get('x-request-id'));
    expect((await service.client.usage()).credits).toEqual(afterMiss.credits);

    const ledger = await service.runtime.credits.ledger(service.organizationId, 500);
    const hitRow = ledger.find((row) => row.request_id === hit.headers.get('x-request-id'));
    expect(hitRow).toMatchObject({ status: 'cache_hit', credits: 0, file_size: hitBytes.length, format: 'png' });
    expect(ledger.find((row) => row.request_id === miss.headers.get('x-request-id'))).toMatchObject({ status: 'charged', credits: 1 });
  });

  it('answers a JSON-mode request from the entry a binary request stored (returnFile is not part of the key)', async () => {
    const html = page('json');
    const binary = await capture({ html, viewportWidth: 300, viewportHeight: 200, cacheEnabled: true });
    const bytes = Buffer.from(await binary.arrayBuffer());
    const json = await capture({ html, viewportWidth: 300, viewportHeight: 200, cacheEnabled: true, returnFile: false });
    expect(json.headers.get('x-cache')).toBe('HIT');
    const body = (await json.json()) as { data: { imageData: string; fileSize: number; requestId: string } };
    expect(Buffer.from(body.data.imageData.split(',')[1]!, 'base64').equals(bytes)).toBe(true);
    expect(body.data.fileSize).toBe(bytes.length);
    expect(body.data.requestId).toBe(json.headers.get('x-request-id'));
  });

  it('treats defaults as given: an explicit default value hits the entry stored without it', async () => {
    const html = page('defaults');
    await capture({ html, cacheEnabled: true, viewportWidth: 300, viewportHeight: 200 });
    const explicit = await capture({
      html,
      cacheEnabled: true,
      viewportWidth: 300,
      viewportHeight: 200,
      format: 'png',
      waitUntil: 'load',
      delay: 0,
      theme: 'auto',
    });
    expect(explicit.headers.get('x-cache')).toBe('HIT');
  });

  it('misses when an option that changes the output differs', async () => {
    const html = page('options');
    await capture({ html, cacheEnabled: true, viewportWidth: 300, viewportHeight: 200 });
    const other = await capture({ html, cacheEnabled: true, viewportWidth: 301, viewportHeight: 200 });
    expect(other.headers.get('x-cache')).toBe('MISS');
    expect(decodePng(new Uint8Array(await other.arrayBuffer())).width).toBe(301);
  });

  it('sends no X-Cache header and does not read the cache without cacheEnabled', async () => {
    const html = page('off');
    await capture({ html, cacheEnabled: true, viewportWidth: 300, viewportHeight: 200 });
    const before = await service.client.usage();
    const response = await capture({ html, viewportWidth: 300, viewportHeight: 200 });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-cache')).toBeNull();
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(before.credits.usedThisPeriod + 1);
  });

  it('never shares entries across organizations', async () => {
    const html = page('tenant');
    await capture({ html, cacheEnabled: true, viewportWidth: 300, viewportHeight: 200 });
    const plan = await service.runtime.accounts.createPlan({ name: `other-${Date.now()}`, tier: 'test', creditsPerMonth: 10 });
    const otherOrg = await service.runtime.accounts.createOrganization('Other org', plan);
    const otherKey = await service.runtime.apiKeys.create({ organizationId: otherOrg.id, name: 'other' });
    const response = await capture({ html, cacheEnabled: true, viewportWidth: 300, viewportHeight: 200 }, otherKey.key);
    expect(response.headers.get('x-cache')).toBe('MISS');
    expect((await service.clientFor(otherKey.key).usage()).credits.usedThisPeriod).toBe(1);
    // The same key of the first organization still hits.
    expect((await capture({ html, cacheEnabled: true, viewportWidth: 300, viewportHeight: 200 })).headers.get('x-cache')).toBe('HIT');
  });

  it('expires entries after cacheTtl seconds', async () => {
    const params = { html: page('ttl'), cacheEnabled: true, cacheTtl: 1, viewportWidth: 300, viewportHeight: 200 };
    expect((await capture(params)).headers.get('x-cache')).toBe('MISS');
    expect((await capture(params)).headers.get('x-cache')).toBe('HIT');
    await sleep(1_500);
    const before = await service.client.usage();
    expect((await capture(params)).headers.get('x-cache')).toBe('MISS');
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(before.credits.usedThisPeriod + 1);
  });

  it('accepts an entry only as old as the asking request’s cacheTtl', async () => {
    const html = page('max-age');
    await capture({ html, cacheEnabled: true, cacheTtl: 3600, viewportWidth: 300, viewportHeight: 200 });
    await sleep(1_200);
    expect(
      (await capture({ html, cacheEnabled: true, cacheTtl: 3600, viewportWidth: 300, viewportHeight: 200 })).headers.get('x-cache'),
    ).toBe('HIT');
    expect((await capture({ html, cacheEnabled: true, cacheTtl: 1, viewportWidth: 300, viewportHeight: 200 })).headers.get('x-cache')).toBe(
      'MISS',
    );
  });

  it('renders five concurrent identical requests once and charges one credit', async () => {
    fixtures.reset();
    const before = await service.client.usage();
    const url = `${fixtures.url}/slow?run=${Date.now()}`;
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => capture({ url, cacheEnabled: true, viewportWidth: 300, viewportHeight: 200 })),
    );
    const bodies = await Promise.all(responses.map(async (r) => Buffer.from(await r.arrayBuffer())));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(responses.map((r) => r.headers.get('x-cache')).sort()).toEqual(['HIT', 'HIT', 'HIT', 'HIT', 'MISS']);
    for (const body of bodies) expect(body.equals(bodies[0]!)).toBe(true);
    // The browser loaded the page once.
    expect(fixtures.requestsTo('/slow')).toHaveLength(1);
    const after = await service.client.usage();
    expect(after.credits.usedThisPeriod).toBe(before.credits.usedThisPeriod + 1);
    const ledger = await service.runtime.credits.ledger(service.organizationId, 500);
    const ids = new Set(responses.map((r) => r.headers.get('x-request-id')));
    expect(
      ledger
        .filter((row) => ids.has(row.request_id))
        .map((row) => row.status)
        .sort(),
    ).toEqual(['cache_hit', 'cache_hit', 'cache_hit', 'cache_hit', 'charged']);
  });

  it('shares a refusal of the page with concurrent identical requests instead of rendering it again', async () => {
    fixtures.reset();
    const before = await service.client.usage();
    const url = `${fixtures.url}/slow?refusal=${Date.now()}`;
    const responses = await Promise.all(
      Array.from({ length: 3 }, () =>
        capture({ url, clipSelector: '#missing', cacheEnabled: true, viewportWidth: 300, viewportHeight: 200 }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual([400, 400, 400]);
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as Array<{ error: { code: string; message: string } }>;
    for (const body of bodies) expect(body.error).toEqual(bodies[0]!.error);
    expect(fixtures.requestsTo('/slow')).toHaveLength(1);
    expect((await service.client.usage()).credits).toEqual(before.credits);
  });

  it('does not cache failures: a failing capture fails again and charges nothing', async () => {
    const params = { html: page('fail'), clipSelector: '#missing', cacheEnabled: true, viewportWidth: 300, viewportHeight: 200 };
    const before = await service.client.usage();
    for (let i = 0; i < 2; i++) {
      const response = await capture(params);
      expect(response.status).toBe(400);
      expect(response.headers.get('x-cache')).toBeNull();
    }
    expect((await service.client.usage()).credits).toEqual(before.credits);
  });

  it('serves hits when the balance is exhausted, since a hit costs nothing', async () => {
    const plan = await service.runtime.accounts.createPlan({ name: `one-${Date.now()}`, tier: 'test', creditsPerMonth: 1 });
    const org = await service.runtime.accounts.createOrganization('One-credit org', plan);
    const key = await service.runtime.apiKeys.create({ organizationId: org.id, name: 'one' });
    const params = { html: page('broke'), cacheEnabled: true, viewportWidth: 300, viewportHeight: 200 };
    expect((await capture(params, key.key)).headers.get('x-cache')).toBe('MISS');
    expect((await service.clientFor(key.key).usage()).credits.remaining).toBe(0);
    const hit = await capture(params, key.key);
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-cache')).toBe('HIT');
    const miss = await capture({ ...params, viewportWidth: 310 }, key.key);
    expect(miss.status).toBe(402);
  });
});

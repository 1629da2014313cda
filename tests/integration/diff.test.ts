import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaguerreError, type DiffResponse } from '../../client/src/index.js';
import { countColour } from '../helpers/diff-images.js';
import { FixtureServer, registerFixtureAddress } from '../helpers/fixture-server.js';
import { callTool, connectHttp, textOf } from '../helpers/mcp.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const HIGHLIGHT: [number, number, number] = [255, 0, 0];

/**
 * A page whose price block (a coloured box at 100,200, 200×80) and clock change between versions,
 * everything else fixed in place: the diff's region and text are known in advance.
 */
function pricingPage(version: { price: string; priceColour: string; clock: string }): string {
  return `<!DOCTYPE html><html><head><title>Pricing</title><style>
    body { margin: 0; font: 16px/1.4 sans-serif; background: #fff; color: #222; }
    #price { position: absolute; left: 100px; top: 200px; width: 200px; height: 80px; margin: 0; background: ${version.priceColour}; color: #fff; }
    #clock { position: absolute; left: 500px; top: 100px; width: 160px; height: 40px; margin: 0; background: #eee; }
    #note { position: absolute; left: 20px; top: 400px; margin: 0; }
  </style></head><body><main>
    <h1 style="position:absolute;left:20px;top:10px;margin:0">Pricing</h1>
    <p id="clock">Time ${version.clock}</p>
    <p id="price">Basic plan: ${version.price} a month</p>
    <p id="note">Every plan comes with email support and a thirty day trial.</p>
  </main></body></html>`;
}

const OPTIONS = { viewportWidth: 800, viewportHeight: 500 };

async function post(
  service: TestService,
  apiKey: string,
  body: unknown,
): Promise<{
  status: number;
  json: { success: boolean; data?: DiffResponse['data']; error?: { code: string; message: string; details?: Array<{ field: string }> } };
}> {
  const response = await service.get('/diff', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as never };
}

const fieldsOf = (json: { error?: { details?: Array<{ field: string }> } }) => (json.error?.details ?? []).map((issue) => issue.field);

/** A loopback port nothing listens on, allowed like a fixture: a capture of it fails to connect. */
async function deadFixtureUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  registerFixtureAddress(`127.0.0.1:${port}`);
  return `http://127.0.0.1:${port}/`;
}

describe('POST /diff: two captures compared once, in pixels and in words', () => {
  const prefix = `diff-test-${randomBytes(4).toString('hex')}`;
  const fixtures = new FixtureServer();
  let service: TestService;
  let otherKey: string;
  let mcp: Client | undefined;

  beforeAll(async () => {
    fixtures.page('/v1', pricingPage({ price: '$10', priceColour: 'rgb(30, 120, 200)', clock: '10:00' }));
    fixtures.page('/v2', pricingPage({ price: '$12', priceColour: 'rgb(200, 60, 30)', clock: '10:05' }));
    await fixtures.start();
    service = await startTestService({ credits: 100, env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1' } });
    const plan = await service.runtime.accounts.createPlan({ name: `diff-other-${Date.now()}`, tier: 'test', creditsPerMonth: 100 });
    const org = await service.runtime.accounts.createOrganization('Other org', plan);
    otherKey = (await service.runtime.apiKeys.create({ organizationId: org.id, name: 'other' })).key;
  });
  afterAll(async () => {
    await mcp?.close();
    await service?.stop();
    await fixtures.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  const used = async () => (await service.client.usage()).credits.usedThisPeriod;

  it('finds the changed region and the changed lines, draws a diff image of the right size, and charges the two captures', async () => {
    const usedBefore = await used();
    const result = await service.client.diff({
      before: { url: `${fixtures.url}/v1` },
      after: { url: `${fixtures.url}/v2` },
      threshold: 0.5,
      ...OPTIONS,
    });
    const { diff } = result;
    expect(diff.width).toBe(800);
    expect(diff.height).toBe(500);
    expect(diff.diffPercent).toBeGreaterThan(0);
    expect(diff.changed).toBe(true);
    // The price box (100,200 200×80) changed colour as a whole: one region covers it, and it is the largest.
    const price = diff.regions[0]!;
    expect(price.x).toBeLessThanOrEqual(100);
    expect(price.y).toBeLessThanOrEqual(200);
    expect(price.x + price.width).toBeGreaterThanOrEqual(300);
    expect(price.y + price.height).toBeGreaterThanOrEqual(280);
    expect(price.width * price.height).toBeLessThan(260 * 120);
    // Nothing outside the two changed elements: every region is inside the price box or the clock (500,100 160×40).
    for (const region of diff.regions) {
      const inPrice = region.x >= 96 && region.y >= 196 && region.x + region.width <= 304 && region.y + region.height <= 284;
      const inClock = region.x >= 496 && region.y >= 96 && region.x + region.width <= 664 && region.y + region.height <= 144;
      expect(inPrice || inClock, JSON.stringify(region)).toBe(true);
    }
    expect(diff.changedPixels).toBeGreaterThanOrEqual(200 * 80 * 0.9);
    expect(diff.diffPercent).toBeCloseTo((diff.changedPixels / (800 * 500)) * 100, 8);
    expect(diff.textAdded).toEqual(['Time 10:05', 'Basic plan: $12 a month']);
    expect(diff.textRemoved).toEqual(['Time 10:00', 'Basic plan: $10 a month']);
    expect(result.creditsCharged).toBe(2);
    expect(await used()).toBe(usedBefore + 2);
    expect(result.before.requestId).toMatch(/^[0-9a-f-]{36}$/);

    // The diff image: a PNG of the compared size whose highlighted pixels are the changed ones.
    expect(diff.diffImageUrl).toMatch(new RegExp(`^${service.url}/diffs/[0-9a-f-]{36}/diff$`));
    const image = await service.get(new URL(diff.diffImageUrl!).pathname, { headers: { 'x-api-key': service.apiKey } });
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    const bytes = new Uint8Array(await image.arrayBuffer());
    const decoded = PNG.sync.read(Buffer.from(bytes));
    expect([decoded.width, decoded.height]).toEqual([800, 500]);
    expect(countColour(bytes, HIGHLIGHT)).toBe(diff.changedPixels);
    // The sides' images too; none of them for another organization or without a key.
    const after = await service.get(new URL(result.after.imageUrl!).pathname, { headers: { 'x-api-key': service.apiKey } });
    expect(PNG.sync.read(Buffer.from(await after.arrayBuffer())).width).toBe(800);
    expect((await service.get(new URL(diff.diffImageUrl!).pathname, { headers: { 'x-api-key': otherKey } })).status).toBe(404);
    expect((await service.get(new URL(diff.diffImageUrl!).pathname)).status).toBe(401);
    expect(
      (await service.get(`/diffs/${new URL(diff.diffImageUrl!).pathname.split('/')[2]}/nope`, { headers: { 'x-api-key': service.apiKey } }))
        .status,
    ).toBe(404);
  });

  it('sees no change, in pixels or words, when ignoreSelectors cover the elements that changed', async () => {
    const result = await service.client.diff({
      before: { url: `${fixtures.url}/v1` },
      after: { url: `${fixtures.url}/v2` },
      ignoreSelectors: ['#price', '#clock'],
      ...OPTIONS,
    });
    expect(result.diff.diffPercent).toBe(0);
    expect(result.diff.changedPixels).toBe(0);
    expect(result.diff.changed).toBe(false);
    expect(result.diff.regions).toEqual([]);
    expect(result.diff.textAdded).toEqual([]);
    expect(result.diff.textRemoved).toEqual([]);
    expect(result.diff.diffImageUrl).toBeNull();
    expect(result.creditsCharged).toBe(2);
  });

  it('charges nothing when a side fails: the capture that succeeded is released too', async () => {
    const usedBefore = await used();
    const dead = await deadFixtureUrl();
    const { status, json } = await post(service, service.apiKey, {
      before: { url: `${fixtures.url}/v1` },
      after: { url: dead },
      ...OPTIONS,
    });
    expect(status).toBeGreaterThanOrEqual(500);
    expect(json.error!.message).toMatch(/^after: /);
    expect(await used()).toBe(usedBefore);
  });

  it('refuses bad input naming the field, before anything is captured or charged', async () => {
    const usedBefore = await used();
    const requestsBefore = fixtures.requests.length;
    const cases: Array<[unknown, string]> = [
      [{ before: { url: 'ftp://example.com/' }, after: { url: `${fixtures.url}/v2` } }, 'before.url'],
      [
        { before: { url: `${fixtures.url}/v1`, jobId: '6f1c7c6e-3f1b-4d7a-9a43-2d6f1f7d2b10' }, after: { url: `${fixtures.url}/v2` } },
        'before.url',
      ],
      [{ before: { url: `${fixtures.url}/v1` }, after: { jobId: 'not-a-uuid' } }, 'after.jobId'],
      [{ before: { url: `${fixtures.url}/v1` }, after: { url: `${fixtures.url}/v2`, colour: 'red' } }, 'after.colour'],
      [{ before: { url: `${fixtures.url}/v1` } }, 'after'],
      [{ before: { url: `${fixtures.url}/v1` }, after: { url: `${fixtures.url}/v2` }, threshold: 101 }, 'threshold'],
      [{ before: { url: `${fixtures.url}/v1` }, after: { url: `${fixtures.url}/v2` }, format: 'jpeg' }, 'format'],
      [{ before: { url: `${fixtures.url}/v1` }, after: { url: `${fixtures.url}/v2` }, latitude: 10 }, 'longitude'],
      // A private address: the egress policy, before any capture.
      [{ before: { url: `${fixtures.url}/v1` }, after: { url: 'http://10.0.0.1/' } }, 'after.url'],
    ];
    for (const [body, field] of cases) {
      const { status, json } = await post(service, service.apiKey, body);
      expect(status, JSON.stringify(body)).toBe(400);
      expect(fieldsOf(json), JSON.stringify(json)).toContain(field);
    }
    expect(fixtures.requests.length).toBe(requestsBefore);
    expect(await used()).toBe(usedBefore);
  });

  it('compares with an async capture of the organization; refuses one of another organization (404), one that is not a png (400) and a monitor run it does not know (404)', async () => {
    const png = await service.client.captureAsync({ url: `${fixtures.url}/v1`, ...OPTIONS });
    expect((await service.client.waitForCapture(png.jobId, { intervalMs: 100, timeoutMs: 60_000 })).status).toBe('succeeded');
    const usedBefore = await used();
    const result = await service.client.diff({ before: { jobId: png.jobId }, after: { url: `${fixtures.url}/v2` }, ...OPTIONS });
    expect(result.diff.diffPercent).toBeGreaterThan(0);
    // The job's file has no page text: the words are not compared.
    expect(result.diff.textAdded).toEqual([]);
    expect(result.creditsCharged).toBe(1);
    expect(await used()).toBe(usedBefore + 1);
    const same = await service.client.diff({ before: { jobId: png.jobId }, after: { jobId: png.jobId } });
    expect(same.diff.diffPercent).toBe(0);
    expect(same.creditsCharged).toBe(0);

    const other = service.clientFor(otherKey);
    const foreign = await other.captureAsync({ url: `${fixtures.url}/v1`, ...OPTIONS });
    expect((await other.waitForCapture(foreign.jobId, { intervalMs: 100, timeoutMs: 60_000 })).status).toBe('succeeded');
    const refused = await post(service, service.apiKey, { before: { jobId: foreign.jobId }, after: { url: `${fixtures.url}/v2` } });
    expect(refused.status).toBe(404);
    expect(fieldsOf(refused.json)).toEqual(['before.jobId']);

    const jpeg = await service.client.captureAsync({ url: `${fixtures.url}/v1`, format: 'jpeg', ...OPTIONS });
    expect((await service.client.waitForCapture(jpeg.jobId, { intervalMs: 100, timeoutMs: 60_000 })).status).toBe('succeeded');
    const notPng = await post(service, service.apiKey, { before: { url: `${fixtures.url}/v1` }, after: { jobId: jpeg.jobId } });
    expect(notPng.status).toBe(400);
    expect(fieldsOf(notPng.json)).toEqual(['after.jobId']);

    const run = await post(service, service.apiKey, {
      before: { runId: '6f1c7c6e-3f1b-4d7a-9a43-2d6f1f7d2b10' },
      after: { url: `${fixtures.url}/v2` },
    });
    expect(run.status).toBe(404);
    expect(fieldsOf(run.json)).toEqual(['before.runId']);
  });

  it('compares with a monitor run of the organization (its image and its page text), and not with one of another organization', async () => {
    const call = (method: string, path: string, apiKey: string, body?: unknown) =>
      service.get(path, {
        method,
        headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    const created = await call('POST', '/monitors', service.apiKey, { url: `${fixtures.url}/v1`, intervalSeconds: 3600, ...OPTIONS });
    expect(created.status).toBe(201);
    const { monitorId } = ((await created.json()) as { data: { monitorId: string } }).data;
    try {
      const run = await until(
        async () => {
          const runs = (
            (await (await call('GET', `/monitors/${monitorId}/runs`, service.apiKey)).json()) as {
              data: { runs: Array<{ runId: string; status: string }> };
            }
          ).data.runs;
          return (
            runs.find((r) => r.status === 'succeeded') ??
            (runs.some((r) => r.status === 'failed') ? Promise.reject(new Error('the run failed')) : undefined)
          );
        },
        60_000,
        'the monitor run',
        150,
      );
      const result = await service.client.diff({ before: { runId: run.runId }, after: { url: `${fixtures.url}/v2` }, ...OPTIONS });
      expect(result.diff.diffPercent).toBeGreaterThan(0);
      expect(result.before.requestId).toBeNull();
      expect(result.diff.textAdded).toEqual(['Time 10:05', 'Basic plan: $12 a month']);
      expect(result.diff.textRemoved).toEqual(['Time 10:00', 'Basic plan: $10 a month']);
      expect(result.creditsCharged).toBe(1);
      const foreign = await post(service, otherKey, { before: { runId: run.runId }, after: { url: `${fixtures.url}/v2` } });
      expect(foreign.status).toBe(404);
      expect(fieldsOf(foreign.json)).toEqual(['before.runId']);
    } finally {
      await call('DELETE', `/monitors/${monitorId}`, service.apiKey);
    }
  });

  it('is the MCP tool diff over /mcp: percent, regions, text changes and links at the service', async () => {
    mcp = await connectHttp(service.url, service.apiKey);
    const result = await callTool(mcp, 'diff', { before: { url: `${fixtures.url}/v1` }, after: { url: `${fixtures.url}/v2` }, ...OPTIONS });
    expect(result.isError).toBeFalsy();
    const text = textOf(result);
    expect(text).toMatch(/% of the pixels changed/);
    expect(text).toContain('+ Basic plan: $12 a month');
    expect(text).toContain('- Basic plan: $10 a month');
    const data = result.structuredContent as DiffResponse['data'];
    expect(data.diff.regions.length).toBeGreaterThan(0);
    expect(data.diff.diffImageUrl!.startsWith(`${service.url}/diffs/`)).toBe(true);
    expect(data.creditsCharged).toBe(2);
    const refused = await callTool(mcp, 'diff', { before: { url: 'http://10.0.0.1/' }, after: { url: `${fixtures.url}/v2` } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('before.url');
  });

  it('answers a DaguerreError from the SDK for a refused diff', async () => {
    await expect(
      service.client.diff({
        before: { runId: '6f1c7c6e-3f1b-4d7a-9a43-2d6f1f7d2b10' },
        after: { runId: '6f1c7c6e-3f1b-4d7a-9a43-2d6f1f7d2b10' },
      }),
    ).rejects.toBeInstanceOf(DaguerreError);
  });
});

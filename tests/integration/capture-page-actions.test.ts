import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../client/src/index.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RED = [255, 0, 0, 255];
const GREEN = [0, 160, 0, 255];
const BLUE = [0, 0, 255, 255];
const WHITE = [255, 255, 255, 255];

/** A white page with a "load more" button; the items it loads come from the fixture server (a real fetch). */
const LOAD_MORE = `<!doctype html><html><head><style>
  body { margin: 0; background: #fff; } button { display: block; width: 100px; height: 40px; margin: 0; }
  .item { width: 100px; height: 50px; background: rgb(0, 160, 0); }
</style></head><body><button id="more" onclick="fetch('/pa/items').then((r) => r.text()).then((html) => { document.querySelector('#list').innerHTML = html; })">Load more</button>
<div id="list"></div></body></html>`;

/** A tall page: red on top, a blue target far below the fold. */
const TALL = `<!doctype html><html><head><style>
  body { margin: 0; background: rgb(255, 0, 0); } #spacer { height: 3000px; } #target { height: 200px; background: rgb(0, 0, 255); }
</style></head><body><div id="spacer"></div><div id="target"></div><div style="height: 3000px"></div></body></html>`;

const BOX =
  '<!doctype html><html><body style="margin:0;background:#fff"><div id="box" style="width:100px;height:100px;background:rgb(255,0,0)"></div></body></html>';

const small = { viewportWidth: 200, viewportHeight: 200, scaleFactor: 1 } as const;

/** One slot: every capture reuses the same warm page, so a failing script must not spoil the next capture. */
describe('page actions: scripts, click, scrollIntoView', () => {
  let service: TestService;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.page('/pa/load-more.html', LOAD_MORE, { 'cache-control': 'no-store' });
    fixtures.page('/pa/tall.html', TALL, { 'cache-control': 'no-store' });
    fixtures.route('/pa/items', (_req, res) => {
      // Answers a little later, as a real API would: the capture must wait for it after the click.
      setTimeout(
        () =>
          res
            .writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' })
            .end('<div class="item"></div><div class="item"></div>'),
        150,
      );
    });
    // A short deadline: one test waits for a script that never settles.
    service = await startTestService({ env: { MAX_CONCURRENCY: '1', RATE_LIMIT_MAX: '1000', CAPTURE_TIMEOUT_MS: '8000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
  });

  const errorOf = async (response: Response) => ((await response.json()) as { error: { code: string; message: string } }).error;
  const getCapture = (params: Record<string, string | number | boolean>) =>
    service.get(`/capture?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`, {
      headers: { 'x-api-key': service.apiKey },
    });

  it('runs scripts before capture, awaiting a returned promise', async () => {
    const script = "await new Promise((r) => setTimeout(r, 100)); document.querySelector('#box').style.background = 'rgb(0, 0, 255)';";
    const changed = decodePng((await service.client.capture({ html: BOX, ...small, scripts: script })).bytes);
    expect(near(changed.pixel(50, 50), BLUE)).toBe(true);

    const promised = decodePng(
      (
        await service.client.capture({
          html: BOX,
          ...small,
          scripts: "return new Promise((r) => setTimeout(() => { document.body.style.background = 'rgb(0, 160, 0)'; r(); }, 150));",
        })
      ).bytes,
    );
    expect(near(promised.pixel(150, 150), GREEN)).toBe(true);

    const plain = decodePng((await service.client.capture({ html: BOX, ...small })).bytes);
    expect(near(plain.pixel(50, 50), RED)).toBe(true);
    expect(near(plain.pixel(150, 150), WHITE)).toBe(true);
  });

  it('answers a thrown error or a rejection with 400 INVALID_INPUT carrying its message, charging nothing; the next capture works', async () => {
    const before = await service.client.usage();
    const thrown = await getCapture({ html: BOX, scripts: "throw new Error('the widget is missing')" });
    expect(thrown.status).toBe(400);
    const error = await errorOf(thrown);
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain('scripts');
    expect(error.message).toContain('the widget is missing');

    const rejected = await getCapture({ html: BOX, scripts: "return Promise.reject(new Error('late failure'))" });
    expect(rejected.status).toBe(400);
    expect((await errorOf(rejected)).message).toContain('late failure');

    const syntax = await getCapture({ html: BOX, scripts: 'if (' });
    expect(syntax.status).toBe(400);
    expect((await errorOf(syntax)).message).toMatch(/scripts: the script failed: SyntaxError: /);
    expect(await service.client.usage()).toEqual(before);

    const next = decodePng((await service.client.capture({ html: BOX, ...small })).bytes);
    expect(near(next.pixel(50, 50), RED)).toBe(true);
  });

  it('answers a script that never settles before the deadline with 400, and the next capture works', async () => {
    const response = await getCapture({ html: BOX, scripts: 'return new Promise(() => {})' });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).message).toMatch(/scripts: the script did not finish within \d+ ms/);
    const next = decodePng((await service.client.capture({ html: BOX, ...small })).bytes);
    expect(near(next.pixel(50, 50), RED)).toBe(true);
  });

  it('clicks a "load more" button and captures what it loaded', async () => {
    const url = `${fixtures.url}/pa/load-more.html`;
    const before = decodePng((await service.client.capture({ url, ...small })).bytes);
    expect(near(before.pixel(50, 65), WHITE)).toBe(true);

    const after = decodePng((await service.client.capture({ url, ...small, click: '#more' })).bytes);
    // The two loaded items sit below the 40 px button: 40–140 px.
    expect(near(after.pixel(50, 65), GREEN)).toBe(true);
    expect(near(after.pixel(50, 130), GREEN)).toBe(true);
    expect(near(after.pixel(150, 65), WHITE)).toBe(true);
  });

  it('answers click and scrollIntoView without a match with 400 INVALID_INPUT naming the selector', async () => {
    const before = await service.client.usage();
    for (const field of ['click', 'scrollIntoView']) {
      const response = await getCapture({ html: BOX, [field]: '#nowhere' });
      expect(response.status).toBe(400);
      const error = await errorOf(response);
      expect(error.code).toBe('INVALID_INPUT');
      expect(error.message).toContain(`${field}: no element matched "#nowhere"`);
    }
    expect(await service.client.usage()).toEqual(before);
  });

  it('scrolls the scrollIntoView element into the viewport before a viewport capture', async () => {
    const url = `${fixtures.url}/pa/tall.html`;
    const top = decodePng((await service.client.capture({ url, ...small })).bytes);
    expect(near(top.pixel(100, 20), RED)).toBe(true);
    const scrolled = decodePng((await service.client.capture({ url, ...small, scrollIntoView: '#target' })).bytes);
    // The target (200 px tall) fills the 200 px viewport from its top.
    expect(near(scrolled.pixel(100, 5), BLUE)).toBe(true);
    expect(near(scrolled.pixel(100, 190), BLUE)).toBe(true);
  });

  it('takes the actions in a POST /capture JSON body', async () => {
    const response = await fetch(`${service.url}/capture`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
      body: JSON.stringify({
        url: `${fixtures.url}/pa/load-more.html`,
        ...small,
        click: '#more',
        scripts: "document.body.style.background = 'rgb(0, 0, 255)'",
      }),
    });
    expect(response.status).toBe(200);
    const image = decodePng(new Uint8Array(await response.arrayBuffer()));
    expect(near(image.pixel(50, 65), GREEN)).toBe(true);
    expect(near(image.pixel(150, 150), BLUE)).toBe(true);
  });

  it('keys the cache by the actions: another script is a new render', async () => {
    const blue = await service.client.capture({
      html: BOX,
      ...small,
      cacheEnabled: true,
      scripts: "document.body.style.background = 'rgb(0, 0, 255)'",
    });
    const green = await service.client.capture({
      html: BOX,
      ...small,
      cacheEnabled: true,
      scripts: "document.body.style.background = 'rgb(0, 160, 0)'",
    });
    expect(green.headers['x-cache']).toBe('MISS');
    expect(near(decodePng(blue.bytes).pixel(150, 150), BLUE)).toBe(true);
    expect(near(decodePng(green.bytes).pixel(150, 150), GREEN)).toBe(true);
    const again = await service.client.capture({
      html: BOX,
      ...small,
      cacheEnabled: true,
      scripts: "document.body.style.background = 'rgb(0, 0, 255)'",
    });
    expect(again.headers['x-cache']).toBe('HIT');
  });

  it.each([
    ['click', '#a[', /click: "#a\[" is not a valid CSS selector/],
    ['scrollIntoView', 'div >', /scrollIntoView: "div >" is not a valid CSS selector/],
  ])('rejects an invalid %s selector with a 400 VALIDATION_ERROR naming the field', async (field, value, message) => {
    const response = await getCapture({ html: BOX, [field]: value });
    expect(response.status).toBe(400);
    const error = await errorOf(response);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toMatch(message);
  });

  it('rejects scrollIntoView with fullPage or pdf, naming it', async () => {
    for (const extra of [{ fullPage: true }, { format: 'pdf' }] as Array<Record<string, string | boolean>>) {
      const response = await getCapture({ html: BOX, scrollIntoView: '#box', ...extra });
      expect(response.status).toBe(400);
      expect((await errorOf(response)).message).toContain('scrollIntoView applies to viewport captures');
    }
  });
});

describe('page actions in async captures (POST /captures)', () => {
  let service: TestService;
  const prefix = `rs-test-pa-${randomUUID().slice(0, 8)}`;
  beforeAll(async () => {
    service = await startTestService({ env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1' } });
  });
  afterAll(async () => {
    await service?.stop();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('runs scripts in a queued job, and a failing script fails the job with INVALID_INPUT and its message', async () => {
    const client = createClient({ baseUrl: service.url, apiKey: service.apiKey });
    const ok = await client.captureAsync({
      html: BOX,
      ...small,
      scripts: "document.querySelector('#box').style.background = 'rgb(0, 0, 255)'",
    });
    const done = await client.waitForCapture(ok.jobId, { intervalMs: 100, timeoutMs: 30_000 });
    expect(done.status).toBe('succeeded');
    const image = decodePng((await client.getCaptureFile(ok.jobId)).bytes);
    expect(near(image.pixel(50, 50), BLUE)).toBe(true);

    const bad = await client.captureAsync({ html: BOX, ...small, scripts: "throw new Error('no such widget')" });
    const failed = await client.waitForCapture(bad.jobId, { intervalMs: 100, timeoutMs: 30_000 });
    expect(failed.status).toBe('failed');
    expect(failed.error?.code, failed.error?.message).toBe('INVALID_INPUT');
    expect(failed.error?.message).toContain('no such widget');
  });
});

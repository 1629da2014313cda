import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCKABLE_RESOURCES } from '@daguerre/contract';
import { DaguerreError } from '../../client/src/index.js';
import { startAuthenticatingProxy } from '../helpers/auth-proxy.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { capturedLogLines, startTestService, type TestService } from '../helpers/test-service.js';

/** Which fixture path stands for each blockable resource type in resources.html. */
const RESOURCE_PATHS: Record<(typeof BLOCKABLE_RESOURCES)[number], string> = {
  stylesheet: '/assets/resources.css',
  script: '/assets/resources.js',
  image: '/img/swatch.png',
  font: '/assets/fixture-font.woff2',
  media: '/assets/clip.webm',
};

/** Content filtering, custom request settings, geolocation and the proxy. */
describe('capture requests: removal, blocking, user agent, headers, geolocation, proxy', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let proxy: Awaited<ReturnType<typeof startAuthenticatingProxy>>;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    proxy = await startAuthenticatingProxy('proxy-user', 'proxy-pa55');
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
    await proxy?.stop();
    await fixtures?.stop();
  });

  it('removes the elements of removeSelectors from the output', async () => {
    const url = `${fixtures.url}/removable.html`;
    const size = { viewportWidth: 300, viewportHeight: 300 };
    const before = decodePng((await service.client.capture({ url, ...size })).bytes);
    expect(near(before.pixel(10, 10), [220, 0, 0])).toBe(true);
    expect(near(before.pixel(110, 110), [0, 0, 220])).toBe(true);

    const after = decodePng((await service.client.capture({ url, ...size, removeSelectors: ['#banner', '.promo'] })).bytes);
    expect(near(after.pixel(10, 10), [255, 255, 255])).toBe(true);
    expect(near(after.pixel(10, 110), [255, 255, 255])).toBe(true);
    expect(near(after.pixel(110, 110), [255, 255, 255])).toBe(true);
    expect(near(after.pixel(10, 210), [0, 160, 0])).toBe(true);

    // The query form: comma-separated and URL-encoded.
    const raw = await service.get(
      `/capture?${new URLSearchParams({ url, viewportWidth: '300', viewportHeight: '300', removeSelectors: '#banner,.promo', apiKey: service.apiKey })}`,
    );
    const fromQuery = decodePng(new Uint8Array(await raw.arrayBuffer()));
    expect(near(fromQuery.pixel(10, 10), [255, 255, 255])).toBe(true);
  });

  it('loads every resource type when nothing is blocked', async () => {
    fixtures.reset();
    const image = decodePng(
      (await service.client.capture({ url: `${fixtures.url}/resources.html`, viewportWidth: 300, viewportHeight: 200 })).bytes,
    );
    for (const [type, path] of Object.entries(RESOURCE_PATHS)) expect(fixtures.requestsTo(path).length, type).toBeGreaterThan(0);
    // The stylesheet applied.
    expect(near(image.pixel(10, 10), [0, 160, 0])).toBe(true);
  });

  for (const blocked of BLOCKABLE_RESOURCES) {
    it(`blockResources=${blocked}: that type never reaches the server, the others do`, async () => {
      fixtures.reset();
      await service.client.capture({
        url: `${fixtures.url}/resources.html`,
        viewportWidth: 300,
        viewportHeight: 200,
        blockResources: [blocked],
      });
      expect(fixtures.requestsTo('/resources.html')).toHaveLength(1);
      for (const [type, path] of Object.entries(RESOURCE_PATHS)) {
        if (type === blocked) expect(fixtures.requestsTo(path), `${type} blocked`).toHaveLength(0);
        else expect(fixtures.requestsTo(path).length, `${type} loaded`).toBeGreaterThan(0);
      }
    });
  }

  it('blocks several types at once, and the document itself never', async () => {
    fixtures.reset();
    await service.client.capture({
      url: `${fixtures.url}/resources.html`,
      viewportWidth: 300,
      viewportHeight: 200,
      blockResources: ['stylesheet', 'image', 'font'],
    });
    expect(fixtures.requestsTo('/resources.html')).toHaveLength(1);
    expect(fixtures.requestsTo(RESOURCE_PATHS.stylesheet)).toHaveLength(0);
    expect(fixtures.requestsTo(RESOURCE_PATHS.image)).toHaveLength(0);
    expect(fixtures.requestsTo(RESOURCE_PATHS.font)).toHaveLength(0);
    expect(fixtures.requestsTo(RESOURCE_PATHS.script)).toHaveLength(1);
  });

  it('blocks blockUrls patterns: * wildcards, and plain entries as substrings', async () => {
    fixtures.reset();
    await service.client.capture({
      url: `${fixtures.url}/blocklist.html`,
      viewportWidth: 200,
      viewportHeight: 200,
      blockUrls: ['*/ads/*', 'tracker/pixel'],
    });
    const paths = fixtures.requests.map((r) => r.path);
    expect(paths.filter((p) => p.startsWith('/ads/'))).toEqual([]);
    expect(paths.filter((p) => p.startsWith('/tracker/'))).toEqual([]);
    expect(fixtures.requestsTo('/img/swatch.png')).toHaveLength(2);

    // Without the block list everything loads (nothing of the previous capture stays blocked).
    fixtures.reset();
    await service.client.capture({ url: `${fixtures.url}/blocklist.html`, viewportWidth: 200, viewportHeight: 200 });
    expect(fixtures.requests.filter((r) => r.path.startsWith('/ads/'))).toHaveLength(2);
    expect(fixtures.requestsTo('/tracker/pixel.gif')).toHaveLength(1);
  });

  it('sends userAgent to the server and to page scripts', async () => {
    const userAgent = 'DaguerreTest/1.0 (fixture; +https://example.test)';
    fixtures.reset();
    await service.client.capture({ url: `${fixtures.url}/agent.html?tag=custom-ua`, userAgent, viewportWidth: 200, viewportHeight: 200 });
    expect(fixtures.requestsTo('/agent.html')[0]?.headers['user-agent']).toBe(userAgent);
    expect(fixtures.requestsTo('/img/swatch.png')[0]?.headers['user-agent']).toBe(userAgent);
    expect(fixtures.reports('custom-ua')[0]?.ua).toBe(userAgent);
    // The ledger keeps the user agent (spec: "only userAgent is kept for logging").
    const ledger = await service.runtime.credits.ledger(service.organizationId, 50);
    expect(ledger.map((row: { user_agent: string | null }) => row.user_agent)).toContain(userAgent);
  });

  it('sends custom headers with every request and never stores their values', async () => {
    const secret = `secret-${Date.now()}-value`;
    fixtures.reset();
    await service.client.capture({
      url: `${fixtures.url}/agent.html?tag=headers`,
      headers: { 'X-Fixture-Token': secret, 'Accept-Language': 'de-DE' },
      viewportWidth: 200,
      viewportHeight: 200,
    });
    const document = fixtures.requestsTo('/agent.html')[0]!;
    expect(document.headers['x-fixture-token']).toBe(secret);
    expect(document.headers['accept-language']).toBe('de-DE');
    expect(fixtures.requestsTo('/img/swatch.png')[0]?.headers['x-fixture-token']).toBe(secret);

    const ledger = await service.runtime.credits.ledger(service.organizationId, 500);
    expect(ledger.length).toBeGreaterThan(0);
    expect(JSON.stringify(ledger)).not.toContain(secret);

    // The next capture sends none of them.
    fixtures.reset();
    await service.client.capture({ url: `${fixtures.url}/agent.html?tag=no-headers`, viewportWidth: 200, viewportHeight: 200 });
    expect(fixtures.requestsTo('/agent.html')[0]?.headers['x-fixture-token']).toBeUndefined();
  });

  it('keeps custom header values out of the log', async () => {
    const secret = `logged-${Date.now()}-value`;
    const logLinesBefore = capturedLogLines.length;
    await service.client.capture({
      url: `${fixtures.url}/agent.html?tag=headers-log`,
      headers: { Authorization: `Bearer ${secret}` },
      viewportWidth: 200,
      viewportHeight: 200,
    });
    expect(capturedLogLines.slice(logLinesBefore).join('\n')).not.toContain(secret);
  });

  it('answers the location API with latitude/longitude, and nothing once they are not given', async () => {
    fixtures.reset();
    const url = `${fixtures.url}/geolocation.html`;
    await service.client.capture({
      url,
      latitude: 48.8584,
      longitude: 2.2945,
      waitForSelector: '#done',
      viewportWidth: 200,
      viewportHeight: 200,
    });
    const report = fixtures.reports('geo')[0]!;
    expect(Number(report.latitude)).toBeCloseTo(48.8584, 4);
    expect(Number(report.longitude)).toBeCloseTo(2.2945, 4);

    fixtures.reset();
    await service.client.capture({
      url,
      latitude: -33.8568,
      longitude: 151.2153,
      waitForSelector: '#done',
      viewportWidth: 200,
      viewportHeight: 200,
    });
    expect(Number(fixtures.reports('geo')[0]!.latitude)).toBeCloseTo(-33.8568, 4);

    fixtures.reset();
    await service.client.capture({ url, waitForSelector: '#done', viewportWidth: 200, viewportHeight: 200 });
    const without = fixtures.reports('geo')[0]!;
    expect(without.latitude).toBeUndefined();
    expect(without.error).toBeDefined();
  });

  it('goes through proxyUrl with proxyUsername/proxyPassword', async () => {
    proxy.log.length = 0;
    fixtures.reset();
    const image = decodePng(
      (
        await service.client.capture({
          url: `${fixtures.url}/agent.html?tag=proxied`,
          proxyUrl: proxy.url,
          proxyUsername: 'proxy-user',
          proxyPassword: 'proxy-pa55',
          viewportWidth: 200,
          viewportHeight: 200,
        })
      ).bytes,
    );
    expect(near(image.pixel(150, 150), [40, 160, 110])).toBe(true);
    // The proxy saw the document with the right credentials (after its 407 challenge) ...
    const forDocument = proxy.log.filter((entry) => entry.url === `${fixtures.url}/agent.html?tag=proxied`);
    expect(forDocument.some((entry) => entry.authorization === proxy.expected)).toBe(true);
    // ... and the fixture server got everything from the proxy.
    expect(fixtures.requests.length).toBeGreaterThan(0);
    for (const received of fixtures.requests) expect(received.headers.via, received.path).toBe('1.1 test-proxy');
    // The proxy password is in no log line.
    expect(capturedLogLines.some((line) => line.includes('proxy-pa55'))).toBe(false);

    // A capture without proxyUrl right after does not use it.
    proxy.log.length = 0;
    fixtures.reset();
    await service.client.capture({ url: `${fixtures.url}/agent.html?tag=direct`, viewportWidth: 200, viewportHeight: 200 });
    expect(proxy.log).toHaveLength(0);
    expect(fixtures.requestsTo('/agent.html')[0]?.headers.via).toBeUndefined();
  });

  it('uses credentials written into an allowed proxyUrl itself, and logs none of them', async () => {
    proxy.log.length = 0;
    fixtures.reset();
    const withCredentials = new URL(proxy.url);
    withCredentials.username = 'proxy-user';
    withCredentials.password = 'proxy-pa55';
    const image = decodePng(
      (
        await service.client.capture({
          url: `${fixtures.url}/agent.html?tag=userinfo`,
          proxyUrl: withCredentials.toString(),
          viewportWidth: 200,
          viewportHeight: 200,
        })
      ).bytes,
    );
    expect(near(image.pixel(150, 150), [40, 160, 110])).toBe(true);
    expect(
      proxy.log.some((entry) => entry.url === `${fixtures.url}/agent.html?tag=userinfo` && entry.authorization === proxy.expected),
    ).toBe(true);
    expect(capturedLogLines.some((line) => line.includes('proxy-pa55'))).toBe(false);
  });

  it('fails cleanly, charging nothing, when the proxy refuses the credentials', async () => {
    const before = await service.client.usage();
    const error = await service.client
      .capture({
        url: `${fixtures.url}/agent.html?tag=bad-proxy`,
        proxyUrl: proxy.url,
        proxyUsername: 'proxy-user',
        proxyPassword: 'wrong',
        viewportWidth: 200,
        viewportHeight: 200,
      })
      .then(
        () => undefined,
        (e: unknown) => e as DaguerreError,
      );
    expect(error).toBeInstanceOf(DaguerreError);
    expect(error!.status).toBeGreaterThanOrEqual(400);
    expect(error!.message).toMatch(/proxy/i);
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
  });
});

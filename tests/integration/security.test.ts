import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { capturedLogLines, startTestService, type TestService } from '../helpers/test-service.js';

/**
 * Runs with the protection ON (ALLOW_PRIVATE_NETWORK=false). Only the fixture server's exact
 * host:port is allow-listed; a canary on another loopback port counts every hit it receives and
 * must see none, whatever the channel.
 */
describe('network policy (protection on)', () => {
  let fixtures: FixtureServer;
  let canary: Server;
  let canaryPort: number;
  let canaryHits: string[];
  let rebindCanary: Server;
  let udp: UdpSocket;
  let udpPackets: number;
  let service: TestService;
  let resolverCalls = 0;

  const canaryUrl = (path = '/') => `http://127.0.0.1:${canaryPort}${path}`;
  const get = (query: Record<string, string>) => service.get(`/capture?${new URLSearchParams({ ...query, apiKey: service.apiKey })}`);

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    const fixturePort = Number(new URL(fixtures.url).port);
    canaryHits = [];
    canary = createServer((req, res) => {
      canaryHits.push(`${req.method} ${req.url}`);
      res
        .writeHead(200, { 'content-type': 'text/html', 'access-control-allow-origin': '*' })
        .end('<body style="background:red">canary</body>');
    });
    canary.on('upgrade', (req, socket) => {
      canaryHits.push(`UPGRADE ${req.url}`);
      socket.destroy();
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    canaryPort = (canary.address() as AddressInfo).port;
    // The same port on another loopback address: where a rebinding name points on its second look.
    rebindCanary = createServer((req, res) => {
      canaryHits.push(`REBIND ${req.url}`);
      res.end('rebound');
    });
    await new Promise<void>((resolve) => rebindCanary.listen(fixturePort, '127.0.0.2', resolve));
    udpPackets = 0;
    udp = createSocket('udp4');
    udp.on('message', () => (udpPackets += 1));
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));

    fixtures.page('/ok', '<body style="margin:0;background:rgb(0,128,0)">ok</body>');
    fixtures.route('/redirect-to-canary', (_req, res) => res.writeHead(302, { location: canaryUrl('/redirected') }).end());
    fixtures.page(
      '/subresources',
      `<body style="margin:0;background:rgb(0,128,0)">
      <img src="${canaryUrl('/img.png')}"><iframe src="${canaryUrl('/frame')}"></iframe>
      <link rel="stylesheet" href="${canaryUrl('/style.css')}">
      <style>@font-face { font-family: x; src: url(${canaryUrl('/font.woff2')}); } p { font-family: x; }</style><p>text</p>
      <script>
        fetch('${canaryUrl('/fetch')}').catch(() => {});
        const xhr = new XMLHttpRequest(); xhr.open('GET', '${canaryUrl('/xhr')}'); xhr.send();
        try { new WebSocket('ws://127.0.0.1:${canaryPort}/ws'); } catch {}
        try { new EventSource('${canaryUrl('/events')}'); } catch {}
        navigator.sendBeacon && navigator.sendBeacon('${canaryUrl('/beacon')}', 'x');
        try { new Worker('/worker.js'); } catch {}
        navigator.serviceWorker && navigator.serviceWorker.register('/sw.js').catch(() => {});
      </script></body>`,
    );
    fixtures.route('/worker.js', (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/javascript' }).end(`fetch('${canaryUrl('/from-worker')}').catch(() => {});`),
    );
    fixtures.route('/sw.js', (_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/javascript' })
        .end(`self.addEventListener('install', () => fetch('${canaryUrl('/from-sw')}').catch(() => {}));`),
    );
    fixtures.page(
      '/meta-refresh',
      `<meta http-equiv="refresh" content="0;url=${canaryUrl('/meta')}"><body style="background:rgb(0,128,0)">refresh</body>`,
    );
    fixtures.page(
      '/script-navigation',
      `<body style="background:rgb(0,128,0)"><script>setTimeout(() => { location.href = '${canaryUrl('/scripted')}'; }, 10)</script></body>`,
    );
    // Closes its connection, so that the image and the fetch need new ones: Chromium keeps its
    // connections through the SOCKS proxy, and each new one is a new look at the name.
    fixtures.route('/rebind', (_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html', connection: 'close' })
        .end(
          `<body style="margin:0;background:rgb(0,128,0)"><img src="/rebind-image.png"><script>fetch('/rebind-data').catch(() => {})</script></body>`,
        ),
    );
    fixtures.page(
      '/webrtc',
      `<body style="background:rgb(0,128,0)"><script>
      try {
        const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${(udp.address() as AddressInfo).port}' }] });
        pc.createDataChannel('x');
        pc.createOffer().then((offer) => pc.setLocalDescription(offer));
      } catch {}
    </script></body>`,
    );

    service = await startTestService({
      env: { ALLOW_PRIVATE_NETWORK: 'false', EGRESS_ALLOW_LIST: `127.0.0.1:${fixturePort}` },
      allowFixtures: false,
      // A stub resolver: `rebind.test` answers the allowed fixture address twice, then another one.
      resolver: async (host) => {
        if (host === 'rebind.test') return ++resolverCalls <= 2 ? ['127.0.0.1'] : ['127.0.0.2'];
        if (host === 'localhost') return ['127.0.0.1'];
        if (host === 'metadata.test') return ['169.254.169.254'];
        if (host === 'mixed.test') return ['93.184.216.34', '10.0.0.1'];
        if (host === 'public-storage.test') return ['93.184.216.34'];
        return ['127.0.0.1'].filter(() => false);
      },
    });
  });

  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
    canary?.close();
    rebindCanary?.close();
    udp?.close();
  });

  beforeEach(() => {
    canaryHits.length = 0;
  });

  it('the allow-listed fixture server is reachable (the control)', async () => {
    const response = await get({ url: `${fixtures.url}/ok`, viewportWidth: '200', viewportHeight: '100' });
    expect(response.status).toBe(200);
    expect(near(decodePng(new Uint8Array(await response.arrayBuffer())).pixel(190, 90), [0, 128, 0])).toBe(true);
  });

  it.each([
    ['loopback', () => canaryUrl('/')],
    ['decimal', () => `http://2130706433:${canaryPort}/`],
    ['hex', () => `http://0x7f000001:${canaryPort}/`],
    ['octal', () => `http://0177.0.0.1:${canaryPort}/`],
    ['short form', () => `http://127.1:${canaryPort}/`],
    ['IPv4-mapped IPv6', () => `http://[::ffff:127.0.0.1]:${canaryPort}/`],
    ['IPv6 loopback', () => `http://[::1]:${canaryPort}/`],
    ['unspecified', () => `http://0.0.0.0:${canaryPort}/`],
    ['localhost name', () => `http://localhost:${canaryPort}/`],
    ['metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['name resolving to metadata', () => 'http://metadata.test/latest/meta-data/'],
    ['name with one private answer', () => 'http://mixed.test/'],
    ['allowed address, other port', () => canaryUrl('/').replace(String(canaryPort), String(Number(new URL(fixtures.url).port) + 1))],
  ])('refuses a %s target up front with 400 INVALID_INPUT and no hit', async (_name, target) => {
    const before = await service.client.usage();
    const response = await get({ url: target() });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('INVALID_INPUT');
    expect(body.error.message).toContain('the destination is not allowed');
    expect(canaryHits).toEqual([]);
    expect((await service.client.usage()).credits).toEqual(before.credits);
  });

  it.each([
    'file:///etc/passwd',
    'view-source:http://example.com/',
    'chrome://version',
    'data:text/html,<h1>x</h1>',
    'javascript:alert(1)',
    'ftp://example.com/',
  ])('refuses the non-http(s) target %s', async (target) => {
    const response = await get({ url: target });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { details: Array<{ field: string }> } }).error.details[0]!.field).toBe('url');
  });

  it('fails a capture whose target redirects to a refused address, without a hit', async () => {
    const response = await get({ url: `${fixtures.url}/redirect-to-canary` });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('the destination is not allowed');
    expect(canaryHits).toEqual([]);
  });

  it('blocks every subresource, fetch, XHR, WebSocket, EventSource, beacon, worker and service worker — and still captures the page', async () => {
    const response = await get({
      url: `${fixtures.url}/subresources`,
      waitUntil: 'networkidle0',
      delay: '500',
      viewportWidth: '400',
      viewportHeight: '300',
    });
    expect(response.status).toBe(200);
    expect(near(decodePng(new Uint8Array(await response.arrayBuffer())).pixel(390, 290), [0, 128, 0])).toBe(true);
    expect(canaryHits).toEqual([]);
  });

  it('blocks meta-refresh and script navigations to refused addresses', async () => {
    for (const path of ['/meta-refresh', '/script-navigation']) {
      await get({ url: `${fixtures.url}${path}`, delay: '500', viewportWidth: '200', viewportHeight: '100' });
    }
    expect(canaryHits).toEqual([]);
  });

  it('everything an inline html page loads is under the same policy', async () => {
    const html = `<body style="background:rgb(0,128,0)"><img src="${canaryUrl('/i')}"><iframe src="${canaryUrl('/f')}"></iframe>
      <script>fetch('${canaryUrl('/x')}').catch(()=>{}); try { new WebSocket('ws://127.0.0.1:${canaryPort}/w') } catch {}</script></body>`;
    const response = await get({ html, waitUntil: 'networkidle0', viewportWidth: '200', viewportHeight: '100' });
    expect(response.status).toBe(200);
    expect(canaryHits).toEqual([]);
  });

  it('a name that resolves differently on a second look (DNS rebinding) reaches only the checked address', async () => {
    const fixturePort = new URL(fixtures.url).port;
    resolverCalls = 0;
    const response = await get({
      url: `http://rebind.test:${fixturePort}/rebind`,
      delay: '300',
      viewportWidth: '200',
      viewportHeight: '100',
    });
    expect(response.status).toBe(200);
    expect(canaryHits).toEqual([]);
    expect(resolverCalls).toBeGreaterThan(2);
  });

  it('a page cannot read local files through iframes or fetch', async () => {
    const html = `<body style="margin:0;background:rgb(0,0,255)"><iframe id="f" src="file:///etc/passwd"></iframe><script>
      (async () => {
        let leaked = false;
        try { const r = await fetch('file:///etc/passwd'); leaked = (await r.text()).includes('root:'); } catch {}
        try { leaked = leaked || (document.getElementById('f').contentDocument?.body?.innerText ?? '').includes('root:'); } catch {}
        document.body.style.background = leaked ? 'rgb(255,0,0)' : 'rgb(0,128,0)';
      })();
    </script></body>`;
    const response = await get({ html, delay: '300', viewportWidth: '200', viewportHeight: '200' });
    expect(response.status).toBe(200);
    const image = decodePng(new Uint8Array(await response.arrayBuffer()));
    expect(near(image.pixel(190, 190), [0, 128, 0])).toBe(true);
  });

  it('WebRTC cannot send UDP around the proxy', async () => {
    const response = await get({ url: `${fixtures.url}/webrtc`, delay: '1000', viewportWidth: '200', viewportHeight: '100' });
    expect(response.status).toBe(200);
    expect(udpPackets).toBe(0);
  });

  it.each([
    ['plain http on the public internet', 'http://public-storage.test/', /must use https/],
    ['credentials in the URL', 'https://user:secret@public-storage.test/', /must not carry credentials/],
    ['a refused address', () => canaryUrl('/'), /the destination is not allowed/],
  ])('refuses a storage endpoint with %s before any work', async (_name, endpoint, message) => {
    const before = await service.client.usage();
    const response = await get({
      url: `${fixtures.url}/ok`,
      requestStorageEnabled: 'true',
      requestStorageEndpoint: typeof endpoint === 'function' ? endpoint() : endpoint,
      requestStorageAccessKeyId: 'AKIA',
      requestStorageSecretAccessKey: 'secret',
      requestStorageBucket: 'b',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(message);
    expect(canaryHits).toEqual([]);
    expect((await service.client.usage()).credits).toEqual(before.credits);
  });

  it('a user proxy on a refused address is refused up front', async () => {
    const response = await get({ url: `${fixtures.url}/ok`, proxyUrl: canaryUrl('/') });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { details: Array<{ field: string }> } }).error.details[0]!.field).toBe('proxyUrl');
    expect(canaryHits).toEqual([]);
  });

  it('no secret used by this suite reached a log line or an error body', async () => {
    const secrets = {
      apiKey: service.apiKey,
      openaiApiKey: 'sk-security-canary-1',
      proxyPassword: 'proxy-pass-canary-2',
      requestStorageSecretAccessKey: 'storage-secret-canary-3',
    };
    const response = await get({
      url: `${fixtures.url}/ok`,
      openaiPrompt: 'x',
      openaiApiKey: secrets.openaiApiKey,
      proxyUrl: `http://127.0.0.1:1/`,
      proxyUsername: 'u',
      proxyPassword: secrets.proxyPassword,
      requestStorageEnabled: 'true',
      requestStorageEndpoint: 'http://127.0.0.1:1/',
      requestStorageAccessKeyId: 'AKIA',
      requestStorageSecretAccessKey: secrets.requestStorageSecretAccessKey,
      requestStorageBucket: 'b',
    });
    const body = await response.text();
    await new Promise((r) => setTimeout(r, 100));
    const logs = capturedLogLines.join('\n');
    const ledger = JSON.stringify(await service.runtime.db.knex('capture_ledger').select('*'));
    for (const secret of Object.values(secrets)) {
      expect(body).not.toContain(secret);
      expect(logs).not.toContain(secret);
      expect(ledger).not.toContain(secret);
    }
  });
});

describe('HTTPS only behind a TLS-terminating proxy', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { TRUST_PROXY: 'true', REQUIRE_HTTPS: 'true' } });
  });
  afterAll(async () => service?.stop());

  it('refuses a request that arrived over plain http and accepts https', async () => {
    const plain = await service.get(`/usage?apiKey=${service.apiKey}`, { headers: { 'x-forwarded-proto': 'http' } });
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { error: { code: string } }).error.code).toBe('HTTPS_REQUIRED');
    const secure = await service.get(`/usage?apiKey=${service.apiKey}`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(secure.status).toBe(200);
  });
});

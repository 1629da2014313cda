import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentFilters } from '../../server/src/capture/page/content-filters/index.js';
import { createLogger } from '../../server/src/logger.js';
import { FixtureServer, registerFixtureAddress } from '../helpers/fixture-server.js';
import { decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * removeCookieBanners with the consent engine and the cookie-notice rules in the page from its
 * start: refusal only, whatever the page carries; bounded cost on a half-present consent manager;
 * nothing left on the reused page for the next capture. Pages come from 127.0.0.2 (a relay), as
 * in content-filters.test.ts: the lists treat 127.0.0.1 as a developer's own machine.
 */

const VIEWPORT = { viewportWidth: 1280, viewportHeight: 800 };
const CONTENT_BLUE = [227, 242, 253];
const ONETRUST_PURPLE = [106, 27, 154];

async function startRelay(targetPort: number): Promise<{ origin: string; stop: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(targetPort, '127.0.0.1');
    sockets.add(inbound).add(outbound);
    inbound.pipe(outbound).pipe(inbound);
    const close = () => (inbound.destroy(), outbound.destroy());
    inbound.on('error', close).on('close', close);
    outbound.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  registerFixtureAddress(`127.0.0.2:${port}`);
  return {
    origin: `http://127.0.0.2:${port}`,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A stage's duration from Server-Timing (`name;dur=ms`). */
function stageMs(headers: Record<string, string>, stage: string): number | undefined {
  const entry = (headers['server-timing'] ?? '')
    .split(',')
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${stage};`));
  return entry ? Number(/dur=([\d.]+)/.exec(entry)?.[1]) : undefined;
}

describe('removeCookieBanners from the document start', () => {
  let service: TestService;
  let fixture: FixtureServer;
  let relay: Awaited<ReturnType<typeof startRelay>>;

  beforeAll(async () => {
    fixture = await new FixtureServer().start();
    relay = await startRelay(Number(new URL(fixture.url).port));
    await new ContentFilters({ logger: createLogger('silent') }).warm();
    service = await startTestService({ credits: 200 });
  });
  afterAll(async () => {
    await service?.stop();
    await relay?.stop();
    await fixture?.stop();
  });

  const capture = (path: string, options: { removeCookieBanners?: boolean } = {}) =>
    service.client.capture({ url: `${relay.origin}${path}`, ...VIEWPORT, ...options });

  it("tells the page's own consent callback 'reject', never 'accept', and the banner shown while loading is gone from the first frame", async () => {
    fixture.reset();
    const off = decodePng((await capture('/cmp/consent-callback.html')).bytes);
    expect(near(off.pixel(640, 760), ONETRUST_PURPLE, 16), 'banner up at load with the option off').toBe(true);
    expect(fixture.reports('site-callback')).toEqual([]);

    fixture.reset();
    const on = decodePng((await capture('/cmp/consent-callback.html', { removeCookieBanners: true })).bytes);
    expect(near(on.pixel(640, 760), CONTENT_BLUE, 6), 'page content where the banner was').toBe(true);
    await fixture.waitForRequest('/report', 3_000);
    // Whatever else happened, the callback heard one answer: the refusal.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fixture.reports('site-callback').map((report) => report.choice)).toEqual(['reject']);
  });

  it("costs under a second on a page with a consent manager's markup but not its script, and hides that markup", async () => {
    const off = decodePng((await capture('/cmp/onetrust-markup-only.html')).bytes);
    expect(near(off.pixel(640, 760), ONETRUST_PURPLE, 16)).toBe(true);
    const shot = await capture('/cmp/onetrust-markup-only.html', { removeCookieBanners: true });
    expect(near(decodePng(shot.bytes).pixel(640, 760), CONTENT_BLUE, 6)).toBe(true);
    const cookiesMs = stageMs(shot.headers, 'cookies');
    expect(cookiesMs).toBeDefined();
    // The design bound is 800 ms for the consent engine plus the cosmetic pass; the margin is for a busy machine.
    expect(cookiesMs!).toBeLessThan(1_500);
  });

  it('leaves no script, binding or stylesheet in the next documents of the reused page', async () => {
    fixture.reset();
    await capture('/cmp/probe.html', { removeCookieBanners: true });
    await fixture.waitForRequest('/report', 3_000);
    const [during] = fixture.reports('probe');
    // The control: while the option is on, the page's first script already finds the engine.
    expect(during).toMatchObject({ bridge: 'object', send: 'function', binding: 'function' });

    fixture.reset();
    // MAX_CONCURRENCY is 2: of two captures one at a time, at least one runs on the same page.
    for (let i = 0; i < 2; i++) await capture('/cmp/probe.html');
    for (let i = 0; i < 20 && fixture.reports('probe').length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    const after = fixture.reports('probe');
    expect(after).toHaveLength(2);
    for (const report of after)
      expect(report).toMatchObject({ bridge: 'undefined', send: 'undefined', receive: 'undefined', binding: 'undefined', sheets: '0' });
  });
});

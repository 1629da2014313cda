import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/** A name no one has asked for before (the resolver keeps answers for a few seconds). */
const deadHost = (label: string) => `${label}-${process.pid}-${Date.now()}.invalid`;

interface FailedRequest {
  url: string;
  reason: string;
}

async function failedRequestsOf(service: TestService, url: string): Promise<FailedRequest[]> {
  const result = await service.client.captureJson({ url, metadata: true });
  return result.data.metadata!.failedRequests.first;
}

const reasonFor = (failed: FailedRequest[], host: string) => failed.find((request) => new URL(request.url).hostname === host)?.reason;

/**
 * Third-party hosts that do not resolve, through the egress proxy (docs/security.md): the page is
 * captured with them failed, named by the destination's error where the policy lets the service
 * name it, and told apart from an internal name nowhere where it does not.
 */
describe('dead third-party hosts through the egress proxy', () => {
  const fixtures = new FixtureServer();
  let strict: TestService;
  let open: TestService;
  let dead: string[];

  beforeAll(async () => {
    dead = [deadHost('tracker-a'), deadHost('tracker-b')];
    const images = [
      ...dead.flatMap((host) => [1, 2, 3].map((i) => `<img src="http://${host}/pixel${i}.gif" width="4" height="4">`)),
      // A name of the hosts file, on a port nobody allowed: the policy refuses it.
      '<img src="http://vm:8123/internal.gif" width="4" height="4">',
    ].join('');
    fixtures
      .page('/article.html', `<!doctype html><title>Article</title><h1>Article</h1>${images}`)
      .route('/moved', (_req, res) => res.writeHead(302, { location: `http://${deadHost('moved-to')}/page` }).end());
    await fixtures.start();
    [strict, open] = await Promise.all([startTestService(), startTestService({ env: { ALLOW_PRIVATE_NETWORK: 'true' } })]);
  });
  afterAll(async () => {
    await Promise.all([strict?.stop(), open?.stop()]);
    await fixtures.stop();
  });

  it('private addresses refused: a missing name fails as a refused internal one does, and the page is captured', async () => {
    const failed = await failedRequestsOf(strict, `${fixtures.url}/article.html`);
    const internal = reasonFor(failed, 'vm');
    expect(internal).toMatch(/^net::ERR_/);
    for (const host of dead) expect(reasonFor(failed, host)).toBe(internal);
  });

  it('private addresses allowed: a missing name is the destination error net::ERR_NAME_NOT_RESOLVED, not the proxy', async () => {
    const failed = await failedRequestsOf(open, `${fixtures.url}/article.html`);
    for (const host of dead) expect(reasonFor(failed, host)).toBe('net::ERR_NAME_NOT_RESOLVED');
  });

  it('private addresses allowed: a target or a redirect to a missing name is named, host and error', async () => {
    const direct = deadHost('target');
    for (const [url, host] of [
      [`http://${direct}/`, direct],
      [`${fixtures.url}/moved`, undefined],
    ] as const) {
      const response = await open.get(`/capture?${new URLSearchParams({ url, apiKey: open.apiKey })}`);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(response.status).toBe(500);
      expect(body.error.code).toBe('OPERATION_FAILED');
      expect(body.error.message).toMatch(/\.invalid does not resolve \(net::ERR_NAME_NOT_RESOLVED\)/);
      if (host) expect(body.error.message).toContain(host);
      expect(body.error.message).not.toContain('only public internet addresses');
    }
  });

  it('private addresses refused: a redirect to a missing name is refused as before, with no word on whether it exists', async () => {
    const response = await strict.get(`/capture?${new URLSearchParams({ url: `${fixtures.url}/moved`, apiKey: strict.apiKey })}`);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('the destination is not allowed');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogLines, startTestService, type TestService } from '../helpers/test-service.js';

const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';
const SECRET = 'S3CR3T-canary-4f1e';

/** Issue #15: secrets through side doors, and refusals that do not tell names apart. */
describe('hardening (issue #15)', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
  });

  const errorOf = async (query: string) => {
    const response = await service.get(`/capture?${query}`);
    return { status: response.status, text: await response.text() };
  };

  it('answers a resolvable private name (from the hosts file) and an unresolvable one with the same message', async () => {
    const resolvable = await errorOf(new URLSearchParams({ url: 'http://vm/', apiKey: service.apiKey }).toString());
    const unresolvable = await errorOf(new URLSearchParams({ url: 'http://no-such-host-for-rendershot.invalid/', apiKey: service.apiKey }).toString());
    expect(resolvable.status).toBe(400);
    expect(unresolvable.status).toBe(400);
    expect(resolvable.text).toContain('the destination is not allowed');
    expect(unresolvable.text).toBe(resolvable.text);
  });

  it('refuses a userAgent with CR/LF/NUL with a 400 naming the field', async () => {
    for (const userAgent of ['Mozilla\r\nX-Evil: 1', 'Mozilla\u0000']) {
      const { status, text } = await errorOf(new URLSearchParams({ html: OK_PAGE, userAgent, apiKey: service.apiKey }).toString());
      expect(status).toBe(400);
      expect(text).toContain('userAgent');
    }
  });

  it('keeps secrets in every spelling out of the log, the ledger, error bodies and metrics', async () => {
    const key = encodeURIComponent(service.apiKey);
    const bodies: string[] = [];
    const statuses: number[] = [];
    // Success path: the key under a percent-encoded name, with other secret fields alongside.
    const ok = await service.get(`/capture?html=${encodeURIComponent(OK_PAGE)}&apiK%65y=${key}&viewportWidth=100&viewportHeight=100`);
    expect(ok.status).toBe(200);
    const failures = [
      `html=x&apiKey=${key}&openai%41piKey=${SECRET}-openai`,
      `html=x&apiKey=${key}&proxyPassw%6Frd=${SECRET}-proxypass&proxyUrl=http://u:${SECRET}-userinfo@vm:8080`,
      `html=x&apiKey=${key}&requestStorageSecretAccessK%65y=${SECRET}-s3&requestStorageEndpoint=${encodeURIComponent(`http://k:${SECRET}-endpoint@vm/`)}`,
      `html=x&apiKey=${key}&headers=${encodeURIComponent(JSON.stringify({ Authorization: `Bearer ${SECRET}-header\r\n` }))}`,
      `html=x&apiKey=${key}&proxyUrl=${encodeURIComponent(`socks5://u:${SECRET}-socks@1.2.3.4:1080`)}`,
      `url=${encodeURIComponent(`http://admin:${SECRET}-target@vm/`)}&apiKey=${key}`,
      `html=x&APIKEY=${SECRET}-upper&apiKey=${key}`,
    ];
    for (const query of failures) {
      // Success or failure, whichever the spelling leads to: neither may echo a secret.
      const response = await service.get(`/capture?${query}`);
      statuses.push(response.status);
      bodies.push(await response.text());
    }
    expect(statuses.filter((status) => status >= 400).length).toBeGreaterThanOrEqual(4);
    // POST body
    const post = await fetch(`${service.url}/capture`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
      body: JSON.stringify({ html: 'x', proxyUrl: `socks5://u:${SECRET}-post@1.2.3.4:1080`, headers: { 'X-T': `${SECRET}-postheader\n` } }),
    });
    expect(post.status).toBe(400);
    bodies.push(await post.text());
    const metrics = await (await service.get('/metrics')).text();
    const ledger = JSON.stringify(await service.runtime.db.knex.select('*').from('capture_ledger'));
    const log = capturedLogLines.join('\n');
    for (const [where, text] of Object.entries({ bodies: bodies.join('\n'), log, metrics, ledger })) {
      expect(text.includes(SECRET), where).toBe(false);
      expect(text.includes(service.apiKey), where).toBe(false);
    }
  });
});

describe('METRICS_TOKEN (issue #15)', () => {
  const token = 'metrics-token-0123456789';
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { METRICS_TOKEN: token } });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('answers /metrics only with the bearer token', async () => {
    expect((await service.get('/metrics')).status).toBe(401);
    expect((await service.get('/metrics', { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    const ok = await service.get('/metrics', { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('rendershot_waiting_organizations');
  });
});

describe('METRICS_PORT (issue #15)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' } });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('serves /metrics on its own port and not on the API port', async () => {
    expect((await service.get('/metrics')).status).toBe(404);
    expect(service.runtime.metricsUrl).toBeDefined();
    expect(service.runtime.metricsUrl).not.toBe(service.url);
    const metrics = await fetch(`${service.runtime.metricsUrl!}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('rendershot_queue_depth');
  });
});

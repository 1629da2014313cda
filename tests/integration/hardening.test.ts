import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthenticatingProxy } from '../helpers/auth-proxy.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { OpenAiStub } from '../helpers/openai-stub.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { capturedLogLines, startTestService, type TestService } from '../helpers/test-service.js';

const OK_PAGE = '<body style="margin:0;background:rgb(40,160,110)"></body>';
const SECRET = 'S3CR3T-canary-4f1e';

/** Every table of the service's SQLite database as JSON text, by table name. */
async function databaseDump(service: TestService): Promise<Record<string, string>> {
  const knex = service.runtime.db.knex;
  const tables = ((await knex.raw("select name from sqlite_master where type = 'table'")) as Array<{ name: string }>).map(
    (row) => row.name,
  );
  expect(tables).toEqual(expect.arrayContaining(['capture_ledger', 'api_keys', 'sign_in_attempts', 'plans', 'dashboard_sessions']));
  const dump: Record<string, string> = {};
  for (const table of tables) dump[table] = JSON.stringify(await knex.select('*').from(table));
  return dump;
}

/** docs/security.md: secrets through side doors, and refusals that do not tell names apart. */
describe('hardening', () => {
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
    const unresolvable = await errorOf(
      new URLSearchParams({ url: 'http://no-such-host-for-daguerre.invalid/', apiKey: service.apiKey }).toString(),
    );
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
    const database = await databaseDump(service);
    const log = capturedLogLines.join('\n');
    for (const [where, text] of Object.entries({ bodies: bodies.join('\n'), log, metrics, ...database })) {
      expect(text.includes(SECRET), where).toBe(false);
      expect(text.includes(service.apiKey), where).toBe(false);
    }
  });
});

describe('METRICS_TOKEN', () => {
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
    expect(await ok.text()).toContain('daguerre_waiting_organizations');
  });
});

describe('METRICS_PORT', () => {
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
    expect(await metrics.text()).toContain('daguerre_queue_depth');
  });
});

/**
 * docs/security.md: every secret field sent in a POST /capture JSON body, through success and failure
 * paths, and found nowhere afterwards: not in the log, any table of the database, an answer or /metrics.
 */
describe('secrets in a POST /capture JSON body', () => {
  const CANARY = 'P0ST-canary-9b2d';
  const secret = {
    openaiApiKey: `sk-${CANARY}-openai`,
    proxyPassword: `${CANARY}-proxypass`,
    proxyUserinfo: `${CANARY}-userinfo`,
    storageKeyId: `${CANARY}-s3id`,
    storageSecret: `${CANARY}-s3secret`,
    header: `${CANARY}-header`,
    wrongApiKey: `rs_${CANARY}-wrongkey`,
    targetUserinfo: `${CANARY}-target`,
  };
  let service: TestService;
  let fixtures: FixtureServer;
  let stub: OpenAiStub;
  let proxy: Awaited<ReturnType<typeof startAuthenticatingProxy>>;
  let userinfoProxy: Awaited<ReturnType<typeof startAuthenticatingProxy>>;
  let s3: TestS3;
  const answers: string[] = [];

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.page('/page', OK_PAGE);
    stub = await new OpenAiStub(secret.openaiApiKey).start();
    proxy = await startAuthenticatingProxy('proxy-user', secret.proxyPassword);
    userinfoProxy = await startAuthenticatingProxy('proxy-user', secret.proxyUserinfo);
    s3 = await startS3({ accessKeyId: secret.storageKeyId, secretAccessKey: secret.storageSecret });
    // At the most verbose level, so that a secret in a debug line is found too.
    service = await startTestService({
      env: { RATE_LIMIT_MAX: '1000', OPENAI_BASE_URL: stub.url, OPENAI_TIMEOUT_MS: '5000', LOG_LEVEL: 'trace' },
    });
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await Promise.all([fixtures?.stop(), stub?.stop(), proxy?.stop(), userinfoProxy?.stop(), s3?.stop()]);
  });

  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(`${service.url}/capture`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    answers.push(text, JSON.stringify([...response.headers]));
    return { status: response.status, text };
  };
  /** Every secret field at once, all of them valid: apiKey in the body, AI, storage, proxy, headers. */
  const everything = () => ({
    apiKey: service.apiKey,
    url: `${fixtures.url}/page`,
    viewportWidth: 160,
    viewportHeight: 120,
    returnFile: false,
    headers: { 'X-Canary': secret.header },
    proxyUrl: proxy.url,
    proxyUsername: 'proxy-user',
    proxyPassword: secret.proxyPassword,
    openaiPrompt: 'What colour is the page?',
    openaiApiKey: secret.openaiApiKey,
    requestStorageEnabled: true,
    requestStorageEndpoint: s3.endpoint,
    requestStorageBucket: s3.bucket,
    requestStorageAccessKeyId: secret.storageKeyId,
    requestStorageSecretAccessKey: secret.storageSecret,
  });
  const withUserinfo = (url: string, password: string) => {
    const parsed = new URL(url);
    parsed.username = 'proxy-user';
    parsed.password = password;
    return parsed.toString();
  };

  it('succeeds with every secret field in the body, and with credentials in the proxy URL', async () => {
    const full = await post(everything());
    expect(full.status, full.text).toBe(200);
    expect(JSON.parse(full.text).data.aiResult.text).toBeTruthy();
    expect(stub.last?.authorization).toBe(`Bearer ${secret.openaiApiKey}`);
    expect(fixtures.requestsTo('/page').some((request) => request.headers['x-canary'] === secret.header)).toBe(true);
    const userinfo = await post({
      ...everything(),
      proxyUrl: withUserinfo(userinfoProxy.url, secret.proxyUserinfo),
      proxyUsername: undefined,
      proxyPassword: undefined,
    });
    expect(userinfo.status, userinfo.text).toBe(200);
    expect(userinfoProxy.log.some((entry) => entry.authorization === userinfoProxy.expected)).toBe(true);
  }, 60_000);

  it('fails on every path with the same secrets in the body', async () => {
    const failures: Array<[string, Record<string, unknown>, number]> = [
      ['validation', { ...everything(), viewportWidth: -1 }, 400],
      ['header with CR/LF', { ...everything(), headers: { Authorization: `Bearer ${secret.header}\r\n` } }, 400],
      ['socks proxy with credentials', { ...everything(), proxyUrl: `socks5://u:${secret.proxyUserinfo}@1.2.3.4:1080` }, 400],
      ['refused proxy with credentials', { ...everything(), proxyUrl: withUserinfo('http://vm:8080', secret.proxyUserinfo) }, 400],
      [
        'storage endpoint with credentials',
        { ...everything(), requestStorageEndpoint: withUserinfo(s3.endpoint, secret.storageSecret) },
        400,
      ],
      ['wrong proxy password', { ...everything(), proxyPassword: `${secret.proxyPassword}-wrong` }, 400],
      ['unknown API key', { ...everything(), apiKey: secret.wrongApiKey }, 401],
      ['target answers 404', { ...everything(), url: `${fixtures.url}/missing`, failOnHttpError: true }, 502],
      ['provider refuses the key', { ...everything(), openaiApiKey: `${secret.openaiApiKey}-revoked` }, 0],
      ['storage refuses the secret', { ...everything(), requestStorageSecretAccessKey: `${secret.storageSecret}-wrong` }, 0],
      ['storage does not know the key id', { ...everything(), requestStorageAccessKeyId: `${secret.storageKeyId}-unknown` }, 0],
      // A target never gets credentials (target-policy.ts): refused before any browser work.
      ['target URL with credentials', { ...everything(), url: withUserinfo(`${fixtures.url}/page`, secret.targetUserinfo) }, 400],
    ];
    for (const [what, body, status] of failures) {
      const answer = await post(body);
      if (status === 0) expect(answer.status, `${what}: ${answer.text}`).toBeGreaterThanOrEqual(400);
      else expect(answer.status, `${what}: ${answer.text}`).toBe(status);
    }
  }, 120_000);

  it('leaves none of them in the log, any table of the database, an answer or /metrics', async () => {
    const metrics = await (await service.get('/metrics')).text();
    const database = await databaseDump(service);
    const places = { log: capturedLogLines.join('\n'), answers: answers.join('\n'), metrics, ...database };
    const values = [...Object.values(secret), service.apiKey];
    for (const [where, text] of Object.entries(places)) {
      for (const value of values) expect(text.includes(value), `${value} in ${where}`).toBe(false);
      expect(text.includes(CANARY), `canary in ${where}`).toBe(false);
    }
    // The places looked at hold what was sent: the requests' log lines, the captures' ledger rows.
    expect(places.log).toMatch(/"method":"POST","url":"\/capture"/);
    expect(database.capture_ledger).toContain('"status":"charged"');
    expect(database.capture_ledger).toContain('"error_code":"TARGET_HTTP_ERROR"');
  });
});

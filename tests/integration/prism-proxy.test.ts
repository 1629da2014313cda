import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, REPO_ROOT } from '../helpers/temp-project.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { freePort } from '../../scripts/bench/free-port.js';

/**
 * Prism 5 as a validating proxy in front of the live service: every operation, signed links
 * included, answers with no request or response violation (`sl-violations`), and every
 * non-standard header the service sends is declared for that operation and status. Prism's proxy
 * corrupts binary bodies (its issue #2349), so file bodies are checked on direct requests instead.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DOCUMENT = JSON.parse(readFileSync(`${REPO_ROOT}/openapi.json`, 'utf8')) as {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }> }>
  >;
};
/** Headers HTTP itself, Express or Prism (CORS) add, which an API document does not declare. */
const STANDARD =
  /^(content-type|content-length|date|connection|keep-alive|etag|transfer-encoding|vary|access-control-.*|sl-violations|cache-control)$/;
const HTML = '<body style="margin:0;background:#0a5"><h1>prism</h1></body>';

interface Checked {
  status: number;
  violations: unknown[];
  headers: Headers;
  body: ArrayBuffer;
}

describe('Prism 5 as a validating proxy in front of the live service', () => {
  let service: TestService;
  let prism: ChildProcess;
  let proxyUrl: string;
  let signing: { keyId: string; secret: string };
  const prefix = `rs-test-prism-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000', REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1' } });
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'links' });
    signing = { keyId: key.id, secret: key.signingSecret };
    const port = await freePort();
    proxyUrl = `http://127.0.0.1:${port}`;
    prism = spawn(
      bin('prism'),
      ['proxy', `${REPO_ROOT}/openapi.json`, service.url, '--port', String(port), '--errors', 'false', '--verboseLevel', 'warn'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    prism.stdout!.on('data', (chunk: Buffer) => (output += String(chunk)));
    prism.stderr!.on('data', (chunk: Buffer) => (output += String(chunk)));
    // Ready when it answers; an exit before that fails with its output.
    const exited = new Promise<never>((_resolve, reject) =>
      prism.once('exit', (code) => reject(new Error(`prism exited (${code}):\n${output}`))),
    );
    const ready = (async () => {
      for (;;) {
        const answer = await fetch(`${proxyUrl}/openapi.json`).catch(() => undefined);
        if (answer) return;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    await Promise.race([ready, exited]);
  }, 180_000);

  afterAll(async () => {
    if (prism && prism.exitCode === null) {
      const gone = new Promise((resolve) => prism.once('exit', resolve));
      prism.kill('SIGTERM');
      await gone;
    }
    await service?.stop();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** One request through Prism; asserts the declared headers and returns the violations Prism found. */
  async function through(
    method: 'GET' | 'POST',
    path: string,
    template: string,
    init: { headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<Checked> {
    const response = await fetch(`${proxyUrl}${path}`, {
      method,
      headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const body = await response.arrayBuffer();
    const raw = response.headers.get('sl-violations');
    const violations = raw ? (JSON.parse(raw) as unknown[]) : [];
    const declared = DOCUMENT.paths[template]![method.toLowerCase()]!.responses[String(response.status)];
    expect(declared, `${method} ${path}: status ${response.status} is declared`).toBeDefined();
    const declaredHeaders = new Set(Object.keys(declared!.headers ?? {}).map((name) => name.toLowerCase()));
    const undeclared = [...response.headers.keys()].filter((name) => !STANDARD.test(name) && !declaredHeaders.has(name));
    expect(undeclared, `${method} ${path} ${response.status}: headers sent but not declared`).toEqual([]);
    const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!;
    if (body.byteLength > 0) expect(Object.keys(declared!.content ?? {}), `${method} ${path}: content type`).toContain(contentType);
    return { status: response.status, violations, headers: response.headers, body };
  }

  const key = () => ({ 'X-API-Key': service.apiKey });

  it('GET /capture as JSON, as a file (key in the query), as pdf, with 1/0 booleans: no violation', async () => {
    const json = await through(
      'GET',
      `/capture?html=${encodeURIComponent(HTML)}&returnFile=false&viewportWidth=200&viewportHeight=100`,
      '/capture',
      { headers: key() },
    );
    expect([json.status, json.violations]).toEqual([200, []]);
    const file = await through(
      'GET',
      `/capture?html=${encodeURIComponent(HTML)}&viewportWidth=200&viewportHeight=100&fullPage=1&apiKey=${service.apiKey}`,
      '/capture',
    );
    expect([file.status, file.violations]).toEqual([200, []]);
    expect(file.headers.get('content-type')).toBe('image/png');
    const pdf = await through('GET', `/capture?html=${encodeURIComponent(HTML)}&format=pdf`, '/capture', { headers: key() });
    expect([pdf.status, pdf.violations]).toEqual([200, []]);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    // The bytes themselves, on a direct request (Prism's proxy mangles binary bodies).
    const direct = await service.get(`/capture?html=${encodeURIComponent(HTML)}&format=pdf`, { headers: key() });
    expect(
      Buffer.from(await direct.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
  });

  it('GET /capture as a signed link, without any key: accepted by the signedLink scheme, no violation', async () => {
    // Signed as the SDK and docs/signed-links.md sign: the URLSearchParams form of the parameters.
    const signed = new URLSearchParams({ html: HTML, viewportWidth: '200', viewportHeight: '100', keyId: signing.keyId }).toString();
    const signature = createHmac('sha256', signing.secret).update(signed).digest('hex');
    const link = await through('GET', `/capture?${signed}&signature=${signature}`, '/capture');
    expect([link.status, link.violations], Buffer.from(link.body).toString()).toEqual([200, []]);
    const tampered = await through('GET', `/capture?${signed.replace('200', '201')}&signature=${signature}`, '/capture');
    expect([tampered.status, tampered.violations]).toEqual([401, []]);
  });

  it('POST /capture, POST /captures (Location, rate-limit headers), the job and its file, /usage: no violation', async () => {
    const posted = await through('POST', '/capture', '/capture', {
      headers: key(),
      body: { html: HTML, returnFile: false, viewportWidth: 200, viewportHeight: 100 },
    });
    expect([posted.status, posted.violations]).toEqual([200, []]);
    const queued = await through('POST', '/captures', '/captures', {
      headers: key(),
      body: { html: HTML, viewportWidth: 200, viewportHeight: 100 },
    });
    expect([queued.status, queued.violations]).toEqual([202, []]);
    expect(queued.headers.get('location')).toMatch(/^\/captures\/[0-9a-f-]{36}$/);
    expect(queued.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    const { jobId } = (JSON.parse(Buffer.from(queued.body).toString()) as { data: { jobId: string } }).data;
    let state: Checked;
    for (;;) {
      state = await through('GET', `/captures/${jobId}`, '/captures/{jobId}', { headers: key() });
      expect([state.status, state.violations]).toEqual([200, []]);
      const { status } = (JSON.parse(Buffer.from(state.body).toString()) as { data: { status: string } }).data;
      if (status === 'succeeded' || status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const file = await through('GET', `/captures/${jobId}/file`, '/captures/{jobId}/file', { headers: key() });
    expect([file.status, file.violations]).toEqual([200, []]);
    expect(file.headers.get('x-capture-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(file.headers.get('content-disposition')).toMatch(/^inline; filename=/);
    const usage = await through('GET', '/usage', '/usage', { headers: key() });
    expect([usage.status, usage.violations]).toEqual([200, []]);
  });

  it('error answers (400, 401, 404) match the declared error body and headers', async () => {
    const both = await through('GET', `/capture?html=x&url=${encodeURIComponent('https://example.com')}`, '/capture', { headers: key() });
    expect([both.status, both.violations]).toEqual([400, []]);
    const badKey = await through('GET', '/usage', '/usage', { headers: { 'X-API-Key': 'rs_not-a-key' } });
    expect([badKey.status, badKey.violations]).toEqual([401, []]);
    const missing = await through('GET', `/captures/${randomUUID()}`, '/captures/{jobId}', { headers: key() });
    expect([missing.status, missing.violations]).toEqual([404, []]);
    const badBody = await through('POST', '/captures', '/captures', {
      headers: key(),
      body: { url: 'https://example.com', viewportWidth: 99999 },
    });
    expect(badBody.status).toBe(400);
    expect(badBody.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  });
});

import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { bin, compile, createTempProject, exec, REPO_ROOT } from '../helpers/temp-project.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A client generated from openapi.json by tools nobody here wrote (openapi-typescript types, the
 * openapi-fetch runtime), type-checked under strict and run against the live service, every
 * operation: GET /capture as file, JSON, pdf and signed link, POST /capture, POST /captures with
 * only the fields a caller cares about, the job's state and file, /usage, and a typed error.
 */
const PROGRAM = `import { createHmac } from 'node:crypto';
import createClient, { createQuerySerializer } from 'openapi-fetch';
import type { paths } from './schema.js';

const [baseUrl, apiKey, target, hook, keyId, signingSecret] = process.argv.slice(2) as [string, string, string, string, string, string];
// Lists travel as one comma-separated value (style: form, explode: false in openapi.json).
const querySerializer = { array: { style: 'form', explode: false } } as const;
// A 200 of /capture is the file or, with returnFile=false, JSON: the second type argument tells
// openapi-fetch which media type \`data\` is parsed as (files are read with parseAs instead).
const client = createClient<paths, \`\${string}/json\`>({ baseUrl, headers: { 'X-API-Key': apiKey }, querySerializer });
const fail = (what: string, response: Response, error?: unknown): never => {
  throw new Error(what + ' failed: ' + response.status + ' ' + JSON.stringify(error));
};

const query = {
  url: target,
  headers: JSON.stringify({ 'X-Test': 'generated' }),
  blockResources: ['stylesheet', 'image'] as Array<'stylesheet' | 'image'>,
  fullPage: true,
  removeAds: false,
  viewportWidth: 320,
  viewportHeight: 200,
} satisfies paths['/capture']['get']['parameters']['query'];

const json = await client.GET('/capture', { params: { query: { ...query, returnFile: false } } });
if (!json.data) fail('JSON capture', json.response, json.error);
// No narrowing needed: data is the CaptureResult.
const fileSize: number = json.data!.data.fileSize;
const file = await client.GET('/capture', { params: { query }, parseAs: 'arrayBuffer' });
if (!file.data) fail('file capture', file.response, file.error);
const pdf = await client.GET('/capture', { params: { query: { html: '<h1>pdf</h1>', format: 'pdf' } }, parseAs: 'arrayBuffer' });
if (!pdf.data) fail('pdf capture', pdf.response, pdf.error);

// A signed link: no key; the signature covers the query string exactly as openapi-fetch sends it.
const anonymous = createClient<paths, \`\${string}/json\`>({ baseUrl, querySerializer });
const linkQuery = { html: "<p>It's signed</p>", viewportWidth: 200, viewportHeight: 100, keyId };
const signed = createQuerySerializer<typeof linkQuery>(querySerializer)(linkQuery);
const signature = createHmac('sha256', signingSecret).update(signed).digest('hex');
const link = await anonymous.GET('/capture', { params: { query: { ...linkQuery, signature } }, parseAs: 'arrayBuffer' });
if (!link.data) fail('signed link', link.response, link.error);

const posted = await client.POST('/capture', { body: { html: '<h1>posted</h1>', returnFile: false, viewportWidth: 200, viewportHeight: 100 } });
if (!posted.data) fail('POST /capture', posted.response, posted.error);

// Only the fields wanted: every defaulted field stays optional (TS2322 before).
const queued = await client.POST('/captures', { body: { url: target.replace('generated.html', 'job.html'), webhookUrl: hook } });
if (!queued.data) fail('POST /captures', queued.response, queued.error);
const jobId = queued.data!.data.jobId;
let state = await client.GET('/captures/{jobId}', { params: { path: { jobId } } });
for (let i = 0; i < 600 && state.data && (state.data.data.status === 'queued' || state.data.data.status === 'active'); i++) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  state = await client.GET('/captures/{jobId}', { params: { path: { jobId } } });
}
if (!state.data) fail('GET /captures/{jobId}', state.response, state.error);
const jobFile = await client.GET('/captures/{jobId}/file', { params: { path: { jobId } }, parseAs: 'arrayBuffer' });
if (!jobFile.data) fail('GET /captures/{jobId}/file', jobFile.response, jobFile.error);

const usage = await client.GET('/usage');
if (!usage.data) fail('usage', usage.response, usage.error);

const refused = await client.GET('/capture', { params: { query: { url: target, viewportWidth: 99999 } } });
const refusal = refused.error?.error;

const head = (data: ArrayBuffer | undefined) => Array.from(new Uint8Array(data!).subarray(0, 4));
console.log(JSON.stringify({
  success: json.data!.success,
  fileSize,
  head: head(file.data),
  contentType: file.response.headers.get('content-type'),
  remaining: file.response.headers.get('x-ratelimit-remaining'),
  pdfHead: head(pdf.data),
  linkStatus: link.response.status,
  linkHead: head(link.data),
  postedSize: posted.data!.data.fileSize,
  queued: { status: queued.response.status, location: queued.response.headers.get('location'), jobStatus: queued.data!.data.status },
  jobStatus: state.data!.data.status,
  jobMime: state.data!.data.result?.mime,
  jobFileHead: head(jobFile.data),
  jobFileRequestId: jobFile.response.headers.get('x-capture-request-id'),
  used: usage.data!.credits.usedThisPeriod,
  refused: { status: refused.response.status, code: refusal?.code, fields: Array.isArray(refusal?.details) ? refusal.details.map((d) => d.field) : [] },
}));
`;

describe('a client generated from openapi.json (openapi-typescript + openapi-fetch), every operation', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let work: string;
  let keyId: string;
  let signingSecret: string;
  const prefix = `rs-test-gen-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.page(
      '/generated.html',
      '<html><head><link rel="stylesheet" href="/generated.css"></head><body><img src="/generated.png"></body></html>',
    );
    fixtures.page('/generated.css', 'body { background: red }', { 'content-type': 'text/css' });
    fixtures.page('/job.html', '<h1>job</h1>');
    fixtures.route('/hook', (_req, res) => res.end());
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000', REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1' } });
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'signing' });
    keyId = key.id;
    signingSecret = key.signingSecret;
    work = await mkdtemp(join(tmpdir(), 'daguerre-generated-client-'));
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
    if (work) await rm(work, { recursive: true, force: true });
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('generates, type-checks under strict, and calls every operation of the live server', async () => {
    await createTempProject(work, 'module', { 'src/main.ts': PROGRAM });
    await exec(bin('openapi-typescript'), [join(REPO_ROOT, 'openapi.json'), '--output', join(work, 'src', 'schema.d.ts')], {
      cwd: work,
      timeout: 120_000,
    });
    // The generated program's only runtime dependency, from this checkout (no registry needed).
    await mkdir(join(work, 'node_modules'), { recursive: true });
    for (const name of ['openapi-fetch', 'openapi-typescript-helpers']) {
      await symlink(join(REPO_ROOT, 'node_modules', name), join(work, 'node_modules', name), 'dir');
    }
    await compile(work);

    fixtures.reset();
    const { stdout } = await exec(
      'node',
      [
        join(work, 'out', 'main.js'),
        service.url,
        service.apiKey,
        `${fixtures.url}/generated.html`,
        `${fixtures.url}/hook`,
        keyId,
        signingSecret,
      ],
      {
        cwd: work,
        timeout: 180_000,
      },
    );
    const result = JSON.parse(stdout.trim()) as Record<string, unknown> & { remaining: string; fileSize: number; postedSize: number };
    const PNG = [0x89, 0x50, 0x4e, 0x47];
    expect(result).toMatchObject({
      success: true,
      head: PNG,
      contentType: 'image/png',
      pdfHead: [0x25, 0x50, 0x44, 0x46],
      linkStatus: 200,
      linkHead: PNG,
      queued: { status: 202, jobStatus: 'queued' },
      jobStatus: 'succeeded',
      jobMime: 'image/png',
      jobFileHead: PNG,
      jobFileRequestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      // Six captures: JSON, file, pdf, signed link, POST, the job.
      used: 6,
      refused: { status: 400, code: 'VALIDATION_ERROR', fields: ['viewportWidth'] },
    });
    expect(result.fileSize).toBeGreaterThan(0);
    expect(result.postedSize).toBeGreaterThan(0);
    expect(Number(result.remaining)).toBeGreaterThan(0);
    expect((result.queued as { location: string }).location).toMatch(/^\/captures\/[0-9a-f-]{36}$/);
    // The JSON header string reached the target; both listed resource types were blocked.
    const documents = fixtures.requestsTo('/generated.html');
    expect(documents).toHaveLength(2);
    for (const request of documents) expect(request.headers['x-test']).toBe('generated');
    expect(fixtures.requestsTo('/job.html')).toHaveLength(1);
    expect(fixtures.requestsTo('/generated.css')).toHaveLength(0);
    expect(fixtures.requestsTo('/generated.png')).toHaveLength(0);
    expect(fixtures.requestsTo('/hook')).toHaveLength(1);
  }, 300_000);
});

import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureServer } from '../helpers/fixture-server.js';
import { bin, compile, createTempProject, exec, REPO_ROOT } from '../helpers/temp-project.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * A client generated from openapi.json by tools nobody here wrote (openapi-typescript types, the
 * openapi-fetch runtime), type-checked under strict and run against the live service: the document
 * describes every parameter as the server reads it (headers as a JSON string, lists, booleans).
 */
const PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const [baseUrl, apiKey, target] = process.argv.slice(2) as [string, string, string];
// Lists travel as one comma-separated value (style: form, explode: false in openapi.json).
const client = createClient<paths>({ baseUrl, querySerializer: { array: { style: 'form', explode: false } } });

const query = {
  url: target,
  headers: JSON.stringify({ 'X-Test': 'generated' }),
  blockResources: ['stylesheet', 'image'] as Array<'stylesheet' | 'image'>,
  fullPage: true,
  removeAds: false,
  viewportWidth: 320,
  viewportHeight: 200,
} satisfies paths['/capture']['get']['parameters']['query'];

const json = await client.GET('/capture', { params: { query: { ...query, returnFile: false }, header: { 'x-api-key': apiKey } } });
if (!json.data) throw new Error('JSON capture failed: ' + json.response.status + ' ' + JSON.stringify(json.error));
// The 200 is the file or, with returnFile=false, the JSON CaptureResult: narrow to the JSON form.
if (typeof json.data === 'string') throw new Error('expected the JSON CaptureResult');
const file = await client.GET('/capture', { params: { query }, headers: { 'X-API-Key': apiKey }, parseAs: 'arrayBuffer' });
if (!file.data) throw new Error('file capture failed: ' + file.response.status);
const usage = await client.GET('/usage', { params: { header: { 'x-api-key': apiKey } } });
if (!usage.data) throw new Error('usage failed: ' + usage.response.status);
console.log(JSON.stringify({
  success: json.data.success,
  fileSize: json.data.data.fileSize,
  head: Array.from(new Uint8Array(file.data).subarray(0, 4)),
  contentType: file.response.headers.get('content-type'),
  remaining: file.response.headers.get('x-ratelimit-remaining'),
  used: usage.data.credits.usedThisPeriod,
}));
`;

describe('a client generated from openapi.json (openapi-typescript + openapi-fetch)', () => {
  let service: TestService;
  let fixtures: FixtureServer;
  let work: string;

  beforeAll(async () => {
    fixtures = await new FixtureServer().start();
    fixtures.page('/generated.html', '<html><head><link rel="stylesheet" href="/generated.css"></head><body><img src="/generated.png"></body></html>');
    fixtures.page('/generated.css', 'body { background: red }', { 'content-type': 'text/css' });
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
    work = await mkdtemp(join(tmpdir(), 'rendershot-generated-client-'));
  });
  afterAll(async () => {
    await service?.stop();
    await fixtures?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('generates, type-checks under strict, and calls the server with headers, lists and booleans', async () => {
    await createTempProject(work, 'module', { 'src/main.ts': PROGRAM });
    await exec(bin('openapi-typescript'), [join(REPO_ROOT, 'openapi.json'), '--output', join(work, 'src', 'schema.d.ts')], { cwd: work, timeout: 120_000 });
    // The generated program's only runtime dependency, from this checkout (no registry needed).
    await mkdir(join(work, 'node_modules'), { recursive: true });
    for (const name of ['openapi-fetch', 'openapi-typescript-helpers']) {
      await symlink(join(REPO_ROOT, 'node_modules', name), join(work, 'node_modules', name), 'dir');
    }
    await compile(work);

    fixtures.reset();
    const { stdout } = await exec('node', [join(work, 'out', 'main.js'), service.url, service.apiKey, `${fixtures.url}/generated.html`], { cwd: work, timeout: 90_000 });
    const result = JSON.parse(stdout.trim()) as { success: boolean; fileSize: number; head: number[]; contentType: string; remaining: string; used: number };
    expect(result.success).toBe(true);
    expect(result.fileSize).toBeGreaterThan(0);
    expect(result.head).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(result.contentType).toBe('image/png');
    expect(Number(result.remaining)).toBeGreaterThan(0);
    expect(result.used).toBe(2);
    // The JSON header string reached the target; both listed resource types were blocked.
    const documents = fixtures.requestsTo('/generated.html');
    expect(documents).toHaveLength(2);
    for (const request of documents) expect(request.headers['x-test']).toBe('generated');
    expect(fixtures.requestsTo('/generated.css')).toHaveLength(0);
    expect(fixtures.requestsTo('/generated.png')).toHaveLength(0);
  }, 240_000);
});

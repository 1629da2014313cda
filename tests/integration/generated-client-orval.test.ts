import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, compile, createTempProject, exec, REPO_ROOT } from '../helpers/temp-project.js';
import {
  expectEveryStepWorked,
  nodeLine,
  PROGRAM_STEPS,
  runProgram,
  startGeneratedClientTarget,
  type GeneratedClientTarget,
} from '../helpers/generated-client-target.js';

/** The mutator docs/openapi-and-tools.md shows, taken from the page itself so the page stays true. */
const MUTATOR = /```ts\n(\/\/ daguerre-fetch\.ts[\s\S]*?)```/.exec(
  readFileSync(new URL('../../docs/openapi-and-tools.md', import.meta.url), 'utf8'),
)?.[1];

/**
 * A client generated from openapi.json by orval's fetch client, type-checked under strict and run
 * against the live service (docs/openapi-and-tools.md): as it comes, it reads every answer of an
 * operation that may send a file as a Blob, the JSON ones too; with the page's mutator every call works.
 */
const PROGRAM = `import * as api from './api.js';
import type { BulkCaptureItem } from './api.js';
import { connect } from './connect.js';

const [baseUrl, apiKey, listTarget] = process.argv.slice(2) as [string, string, string];
const init = connect(baseUrl, apiKey);
${PROGRAM_STEPS}
// The bulk body is typed: a misspelt field, a word for a number, an unknown format do not compile.
// @ts-expect-error ulr is no field
const misspelt: BulkCaptureItem = { ulr: 'https://example.com' };
// @ts-expect-error viewportWidth is a number
const wide: BulkCaptureItem = { html: 'x', viewportWidth: 'wide' };
// @ts-expect-error bmp is no format
const bmp: BulkCaptureItem = { html: 'x', format: 'bmp' };
void [misspelt, wide, bmp];

const notJson = (status: number) => new Error('a Blob where JSON was typed (' + status + ')');
await step('file', async () => {
  const res = await api.capture({ html: '<h1>file</h1>', format: 'png', viewportWidth: 200, viewportHeight: 100 }, init);
  if (res.status !== 200 || !(res.data instanceof Blob)) throw new Error('no file: ' + res.status);
  return { status: res.status, type: res.headers.get('content-type'), head: await head(res.data) };
});
await step('json', async () => {
  const res = await api.capture({ html: '<h1>json</h1>', returnFile: false, viewportWidth: 200, viewportHeight: 100 }, init);
  if (res.status !== 200 || res.data instanceof Blob) throw notJson(res.status);
  return { success: res.data.success, mime: res.data.data.imageData?.slice(5, 14) };
});
await step('list', async () => {
  const res = await api.capture({ url: listTarget, blockResources: ['stylesheet', 'image'], viewportWidth: 200, viewportHeight: 100 }, init);
  if (res.status !== 200 || !(res.data instanceof Blob)) throw new Error('no file: ' + res.status);
  return { status: res.status, head: await head(res.data) };
});
await step('posted', async () => {
  const res = await api.captureWithBody({ html: '<h1>posted</h1>', returnFile: false, viewportWidth: 200, viewportHeight: 100 }, init);
  if (res.status !== 200 || res.data instanceof Blob) throw notJson(res.status);
  return { success: res.data.success, fileName: res.data.data.fileName };
});
await step('usage', async () => {
  const res = await api.usage(undefined, init);
  if (res.status !== 200) throw new Error('no usage: ' + res.status);
  return { used: res.data.credits.usedThisPeriod };
});
await step('job', async () => {
  const queued = await api.createCaptureJob({ html: '<h1>job</h1>', viewportWidth: 200, viewportHeight: 100 }, init);
  if (queued.status !== 202) throw new Error('not queued: ' + queued.status);
  const jobId = queued.data.data.jobId;
  let job = await api.getCaptureJob(jobId, init);
  for (let i = 0; i < 300 && job.status === 200 && (job.data.data.status === 'queued' || job.data.data.status === 'active'); i++) {
    await sleep(100);
    job = await api.getCaptureJob(jobId, init);
  }
  const file = await api.getCaptureJobFile(jobId, init);
  if (file.status !== 200 || !(file.data instanceof Blob)) throw new Error('no job file: ' + file.status);
  return { accepted: queued.status, status: job.status === 200 ? job.data.data.status : job.status, head: await head(file.data) };
});
await step('batch', async () => {
  const accepted = await api.createCaptureBatch({ defaults: { format: 'png', viewportWidth: 200, viewportHeight: 100 }, requests: [{ html: '<p>1</p>' }, { html: '<p>2</p>' }] }, init);
  if (accepted.status !== 202) throw new Error('not accepted: ' + accepted.status);
  const batchId = accepted.data.data.batchId;
  let batch = await api.getCaptureBatch(batchId, init);
  for (let i = 0; i < 300 && batch.status === 200 && batch.data.data.status !== 'completed'; i++) {
    await sleep(100);
    batch = await api.getCaptureBatch(batchId, init);
  }
  if (batch.status !== 200) throw new Error('no batch: ' + batch.status);
  return { accepted: accepted.status, total: accepted.data.data.total, status: batch.data.data.status, succeeded: batch.data.data.counts.succeeded };
});
await step('refused', async () => {
  const res = await api.capture({ html: '<p>x</p>', viewportWidth: 99999 }, init);
  if (res.status !== 400 || res.data instanceof Blob) throw notJson(res.status);
  const details = res.data.error.details;
  return { status: res.status, code: res.data.error.code, fields: Array.isArray(details) ? details.map((issue) => issue.field) : [] };
});
console.log(JSON.stringify({ failed, seen }));
`;

/** Generates orval's fetch client with this config's output, then type-checks the program over it. */
async function generate(
  work: string,
  output: Record<string, unknown>,
  connect: string,
  files: Record<string, string> = {},
): Promise<string> {
  await createTempProject(work, 'module', { 'src/main.ts': PROGRAM, 'src/connect.ts': connect, ...files });
  const config = {
    daguerre: {
      input: join(REPO_ROOT, 'openapi.json'),
      output: { target: './src/api.ts', client: 'fetch', tsconfig: './tsconfig.json', ...output },
    },
  };
  // orval reads the tsconfig to write node16 imports with their .js extension.
  await writeFile(join(work, 'orval.config.mjs'), `export default ${JSON.stringify(config)};\n`);
  await exec(await nodeLine(24), [bin('orval'), '--config', 'orval.config.mjs'], { cwd: work, timeout: 120_000 });
  await compile(work);
  return join(work, 'out', 'main.js');
}

describe('a client generated by orval 8.38 (fetch) from openapi.json', () => {
  let target: GeneratedClientTarget;

  beforeAll(async () => {
    target = await startGeneratedClientTarget('orval');
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('as it comes (only baseUrl set): the JSON answers of operations that may send a file arrive as Blobs', async () => {
    // The key travels as a header of every call (orval's fetch takes a RequestInit per call).
    const connect = `export const connect = (_baseUrl: string, apiKey: string): RequestInit => ({ headers: { 'X-API-Key': apiKey } });\n`;
    const script = await generate(join(target.work, 'plain'), { baseUrl: target.service.url }, connect);
    target.fixtures.reset();
    const { failed, seen } = await runProgram(target, script);
    expect(failed).toEqual(['json', 'posted', 'refused']);
    // Files, JSON-only operations and the list are fine: one comma-separated value, as explode: false says.
    expect(Object.keys(seen).sort()).toEqual(['batch', 'file', 'job', 'list', 'usage']);
    expect(target.fixtures.requestsTo('/listed.html')).toHaveLength(1);
    expect(target.fixtures.requestsTo('/listed.css')).toHaveLength(0);
    expect(target.fixtures.requestsTo('/listed.png')).toHaveLength(0);
  }, 180_000);

  it('with the mutator of docs/openapi-and-tools.md: every call works', async () => {
    expect(MUTATOR, 'the daguerre-fetch.ts block of docs/openapi-and-tools.md').toBeDefined();
    const connect = `import { daguerre } from './daguerre-fetch.js';

export function connect(baseUrl: string, apiKey: string): RequestInit {
  daguerre.baseUrl = baseUrl;
  daguerre.apiKey = apiKey;
  return {};
}
`;
    const output = { override: { mutator: { path: './src/daguerre-fetch.ts', name: 'daguerreFetch' } } };
    const script = await generate(join(target.work, 'mutator'), output, connect, { 'src/daguerre-fetch.ts': MUTATOR! });
    target.fixtures.reset();
    expectEveryStepWorked(await runProgram(target, script), target);
  }, 180_000);
});

import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { bin, compile, createTempProject, exec, REPO_ROOT } from '../helpers/temp-project.js';
import {
  expectEveryStepWorked,
  nodeLine,
  PROGRAM_STEPS,
  runProgram,
  startGeneratedClientTarget,
  type GeneratedClientTarget,
} from '../helpers/generated-client-target.js';

/**
 * A client generated from openapi.json by @hey-api/openapi-ts as it comes (its bundled fetch
 * client, no option, no runtime package), type-checked under strict and run against the live
 * service (docs/openapi-and-tools.md). Its fetch client reads each answer by its Content-Type, so
 * a file and the JSON of the same operation both arrive as they are.
 */
const PROGRAM = `import { client } from './daguerre/client.gen.js';
import { capture, captureWithBody, createCaptureBatch, createCaptureJob, getCaptureBatch, getCaptureJob, getCaptureJobFile, usage } from './daguerre/sdk.gen.js';
import type { BulkCaptureItem } from './daguerre/types.gen.js';

const [baseUrl, apiKey, listTarget] = process.argv.slice(2) as [string, string, string];
// response is undefined only when fetch itself failed (no answer).
client.setConfig({ baseUrl, headers: { 'X-API-Key': apiKey } });
${PROGRAM_STEPS}
// The bulk body is typed: a misspelt field, a word for a number, an unknown format do not compile.
// @ts-expect-error ulr is no field
const misspelt: BulkCaptureItem = { ulr: 'https://example.com' };
// @ts-expect-error viewportWidth is a number
const wide: BulkCaptureItem = { html: 'x', viewportWidth: 'wide' };
// @ts-expect-error bmp is no format
const bmp: BulkCaptureItem = { html: 'x', format: 'bmp' };
void [misspelt, wide, bmp];

// A 200 of /capture is typed as the JSON CaptureResult; a file arrives as a Blob (read by Content-Type).
await step('file', async () => {
  const { data, response } = await capture({ query: { html: '<h1>file</h1>', format: 'png', viewportWidth: 200, viewportHeight: 100 } });
  if (!(data instanceof Blob)) throw new Error('a file, not a Blob: ' + response?.status);
  return { status: response?.status, type: response?.headers.get('content-type'), head: await head(data) };
});
await step('json', async () => {
  const { data, response } = await capture({ query: { html: '<h1>json</h1>', returnFile: false, viewportWidth: 200, viewportHeight: 100 } });
  if (!data || data instanceof Blob) throw new Error('JSON, not ' + String(data) + ': ' + response?.status);
  return { success: data.success, mime: data.data.imageData?.slice(5, 14) };
});
await step('list', async () => {
  const { data, response } = await capture({ query: { url: listTarget, blockResources: ['stylesheet', 'image'], viewportWidth: 200, viewportHeight: 100 } });
  if (!(data instanceof Blob)) throw new Error('a file, not a Blob: ' + response?.status);
  return { status: response?.status, head: await head(data) };
});
await step('posted', async () => {
  const { data, response } = await captureWithBody({ body: { html: '<h1>posted</h1>', returnFile: false, viewportWidth: 200, viewportHeight: 100 } });
  if (!data || data instanceof Blob) throw new Error('JSON, not ' + String(data) + ': ' + response?.status);
  return { success: data.success, fileName: data.data.fileName };
});
await step('usage', async () => {
  const { data } = await usage();
  if (!data) throw new Error('no usage');
  return { used: data.credits.usedThisPeriod };
});
await step('job', async () => {
  const queued = await createCaptureJob({ body: { html: '<h1>job</h1>', viewportWidth: 200, viewportHeight: 100 } });
  if (!queued.data) throw new Error('not queued: ' + queued.response?.status);
  const path = { jobId: queued.data.data.jobId };
  let job = await getCaptureJob({ path });
  for (let i = 0; i < 300 && (job.data?.data.status === 'queued' || job.data?.data.status === 'active'); i++) {
    await sleep(100);
    job = await getCaptureJob({ path });
  }
  const file = await getCaptureJobFile({ path });
  if (!(file.data instanceof Blob)) throw new Error('the job file, not a Blob: ' + file.response?.status);
  return { accepted: queued.response?.status, status: job.data?.data.status, head: await head(file.data) };
});
await step('batch', async () => {
  const accepted = await createCaptureBatch({ body: { defaults: { format: 'png', viewportWidth: 200, viewportHeight: 100 }, requests: [{ html: '<p>1</p>' }, { html: '<p>2</p>' }] } });
  if (!accepted.data) throw new Error('not accepted: ' + accepted.response?.status);
  const path = { batchId: accepted.data.data.batchId };
  let batch = await getCaptureBatch({ path });
  for (let i = 0; i < 300 && batch.data && batch.data.data.status !== 'completed'; i++) {
    await sleep(100);
    batch = await getCaptureBatch({ path });
  }
  return { accepted: accepted.response?.status, total: accepted.data.data.total, status: batch.data?.data.status, succeeded: batch.data?.data.counts.succeeded };
});
await step('refused', async () => {
  const { error, response } = await capture({ query: { html: '<p>x</p>', viewportWidth: 99999 } });
  if (!error) throw new Error('not refused: ' + response?.status);
  const details = error.error.details;
  return { status: response?.status, code: error.error.code, fields: Array.isArray(details) ? details.map((issue) => issue.field) : [] };
});
console.log(JSON.stringify({ failed, seen }));
`;

describe('a client generated by @hey-api/openapi-ts 0.99 from openapi.json, as it comes', () => {
  let target: GeneratedClientTarget;

  beforeAll(async () => {
    target = await startGeneratedClientTarget('hey-api');
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('generates, type-checks under strict, and works against the live service: files, JSON, a list, async and bulk, a typed error', async () => {
    const work = join(target.work, 'hey-api');
    await createTempProject(work, 'module', { 'src/main.ts': PROGRAM });
    await exec(
      await nodeLine(24),
      [bin('openapi-ts'), '--input', join(REPO_ROOT, 'openapi.json'), '--output', join(work, 'src', 'daguerre')],
      { cwd: work, timeout: 120_000 },
    );
    await compile(work);
    expectEveryStepWorked(await runProgram(target, join(work, 'out', 'main.js')), target);
  }, 180_000);
});

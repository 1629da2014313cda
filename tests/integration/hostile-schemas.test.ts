import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { INSIGHT_LIMITS, type ErrorBody } from '@daguerre/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedOrganization, spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { probeLatency } from '../helpers/latency-probe.js';
import { OpenAiStub } from '../helpers/openai-stub.js';

/**
 * A caller's JSON Schema (openaiSchema) can neither hold the service's event loop nor grow its heap
 * (services/schema-checker.ts): attacks from one organization against a real `daguerre serve`
 * process, with /health asked all along from outside. Under the old engine (Ajv on the event loop
 * with JavaScript's backtracking RegExp) the catastrophic answer below would hold the whole service
 * for hours; each bulk compiled 44 schemas before its 400 and kept them for ever.
 */
const PROVIDER_KEY = 'sk-hostile-schema-key-0123456789';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PAGE = '<body style="margin:0;background:#e63946"><h1>Schema</h1></body>';

/** A ~12 KB schema, different for each `tag`: many properties with patterns and bounds, as a real form might have. */
function bulkySchema(tag: string): string {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 160; i++) properties[`${tag}_field_${i}`] = { type: 'string', pattern: `^[a-z]{1,${i + 1}}$`, maxLength: 40 };
  return JSON.stringify({ type: 'object', properties, required: [`${tag}_field_0`] });
}

/** The index of the first schema that brings the different schemas past INSIGHT_LIMITS.openaiSchemaRequestMaxLength. */
function firstPastBudget(schemas: string[]): number {
  let total = 0;
  const index = schemas.findIndex((schema) => (total += schema.length) > INSIGHT_LIMITS.openaiSchemaRequestMaxLength);
  expect(index).toBeGreaterThan(0);
  return index;
}

/** The field of the first detail of a 400. */
const firstField = (error: ErrorBody['error']) => (error.details as Array<{ field: string }> | undefined)?.[0]?.field;

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

describe('hostile JSON Schemas against a real service', () => {
  let stub: OpenAiStub;
  let database: TestDatabase;
  let service: ChildService;
  let attacker: { apiKey: string };

  beforeAll(async () => {
    stub = await new OpenAiStub(PROVIDER_KEY).start();
    database = await createTestDatabase('sqlite');
    attacker = await seedOrganization(database.url, 10_000);
    service = await spawnService({
      DATABASE_URL: database.url,
      REDIS_URL,
      JOB_QUEUE_PREFIX: `hostile-schema-${randomUUID()}`,
      OPENAI_BASE_URL: stub.url,
      OPENAI_MODEL: 'stub-vision',
      OPENAI_TIMEOUT_MS: '10000',
      RATE_LIMIT_MAX: '10000',
      MAX_CONCURRENCY: '2',
    });
  });
  afterAll(async () => {
    await service?.stop();
    service?.reapOrphans();
    await stub?.stop();
    await database?.drop();
  });

  const headers = () => ({ 'x-api-key': attacker.apiKey, 'x-openai-api-key': PROVIDER_KEY, 'content-type': 'application/json' });
  /** 44 bulk items, each with the schema `tagOf(index)` names. */
  const bulkItems = (tagOf: (index: number) => string) =>
    Array.from({ length: 44 }, (_, index) => ({ html: PAGE, openaiPrompt: 'Fill the form', openaiSchema: bulkySchema(tagOf(index)) }));
  const postBulk = (requests: unknown[]) =>
    fetch(`${service.url}/captures/bulk`, { method: 'POST', headers: headers(), body: JSON.stringify({ requests }) });

  it('checks a catastrophic pattern against a chosen answer in linear time, while /health keeps answering', async () => {
    const schema = JSON.stringify({ type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } }, required: ['a'] });
    // 40 "a"s and a "!": backtracking would take 2^40 steps (the issue measured 2.25 s at 28).
    stub.reply(JSON.stringify({ a: `${'a'.repeat(40)}!` }));
    const probe = probeLatency(`${service.url}/health`);
    const response = await fetch(`${service.url}/capture`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({
        html: PAGE,
        viewportWidth: 300,
        viewportHeight: 200,
        openaiPrompt: 'Give a',
        openaiSchema: schema,
        returnFile: false,
      }),
    });
    const health = await probe.stop();
    expect(response.status).toBe(502);
    const error = ((await response.json()) as ErrorBody).error;
    expect(error.code).toBe('AI_RESULT_INVALID');
    expect(error.message).toContain('/a must match pattern');
    expect(health.answered).toBeGreaterThan(0);
    expect(health.failed).toBe(0);
    console.log(`worst /health during the catastrophic pattern: ${health.worstMs} ms`);
  });

  it('refuses a bulk of many different large schemas before compiling any, naming the item past the budget; the heap does not grow', async () => {
    const before = rssMb(service.pid);
    const probe = probeLatency(`${service.url}/health`);
    for (let round = 0; round < 12; round++) {
      const requests = bulkItems((index) => `r${round}i${index}`);
      const response = await postBulk(requests);
      expect(response.status).toBe(400);
      const error = ((await response.json()) as ErrorBody).error;
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(firstField(error)).toBe(`requests[${firstPastBudget(requests.map((item) => item.openaiSchema))}].openaiSchema`);
      expect(error.message).toContain('characters together');
    }
    const health = await probe.stop();
    const grown = rssMb(service.pid) - before;
    console.log(
      `bulk schema flood: worst /health ${health.worstMs} ms, RSS ${before.toFixed(0)} MB → +${grown.toFixed(0)} MB after 12 bulks`,
    );
    expect(health.failed).toBe(0);
    // The old engine grew by ~47 MB a bulk (563 MB in 12); parsing 12 × 750 KB of JSON costs a little.
    expect(grown).toBeLessThan(150);
  });

  it('refuses the cheap fault of the last item before compiling any schema', async () => {
    const requests = bulkItems((index) => `cheap${index % 2}`);
    requests[43] = { ...requests[43]!, url: 'http://169.254.169.254/latest/meta-data/' } as (typeof requests)[number];
    delete (requests[43] as { html?: string }).html;
    const response = await postBulk(requests);
    expect(response.status).toBe(400);
    const error = ((await response.json()) as ErrorBody).error;
    expect(firstField(error)).toMatch(/^requests\[43\]/);
  });

  it('compiles a bulk within the budget off the event loop, each different schema once, and queues it', async () => {
    const probe = probeLatency(`${service.url}/health`);
    const response = await postBulk(bulkItems((index) => `ok${index % 2}`));
    const health = await probe.stop();
    expect(response.status).toBe(202);
    const batch = (await response.json()) as { data: { batchId: string } };
    await fetch(`${service.url}/captures/bulk/${batch.data.batchId}`, { method: 'DELETE', headers: headers() });
    expect(health.failed).toBe(0);
    console.log(`bulk of 44 items, two 12 KB schemas: worst /health ${health.worstMs} ms`);
  });

  it('names a pattern the linear-time engine cannot run', async () => {
    const schema = JSON.stringify({ type: 'object', properties: { word: { type: 'string', pattern: '^(\\w)\\1$' } } });
    const response = await fetch(`${service.url}/capture`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ html: PAGE, openaiPrompt: 'Give a word', openaiSchema: schema }),
    });
    expect(response.status).toBe(400);
    const error = ((await response.json()) as ErrorBody).error;
    expect(firstField(error)).toBe('openaiSchema');
    expect(error.message).toContain('RE2');
  });
});

import type { ErrorBody } from '@daguerre/contract';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenAiStub } from '../helpers/openai-stub.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * openaiSchema (docs/page-insight.md). The schema goes to the model as a structured output
 * (response_format json_schema) through the openai SDK, the answer is validated before it is
 * returned parsed as data.aiResult, a non-matching answer is a clear 502 AI_RESULT_INVALID charged
 * nothing, and with cacheEnabled the same image and question are answered from the AI cache.
 * Against the loopback OpenAI-compatible server of tests/helpers.
 */
const PROVIDER_KEY = 'sk-schema-test-key-0123456789';
const PAGE = '<body style="margin:0;background:#1d3557;color:#fff;font:40px sans-serif"><h1>Price: 42 EUR</h1></body>';
const SCHEMA = {
  type: 'object',
  properties: { product: { type: 'string' }, price: { type: 'number' }, currency: { type: 'string', enum: ['EUR', 'USD'] } },
  required: ['price', 'currency'],
  additionalProperties: false,
};

describe("AI answers in the caller's JSON Schema", () => {
  let stub: OpenAiStub;
  let service: TestService;

  beforeAll(async () => {
    stub = await new OpenAiStub(PROVIDER_KEY).start();
    service = await startTestService({
      env: { OPENAI_BASE_URL: stub.url, OPENAI_MODEL: 'stub-vision', OPENAI_TIMEOUT_MS: '5000', RATE_LIMIT_MAX: '1000' },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await stub?.stop();
  });
  beforeEach(() => {
    stub.reply(JSON.stringify({ product: 'Widget', price: 42, currency: 'EUR' }));
  });

  const capture = (params: Record<string, string>) =>
    service.get(`/capture?${new URLSearchParams({ html: PAGE, viewportWidth: '400', viewportHeight: '200', ...params }).toString()}`, {
      headers: { 'x-api-key': service.apiKey, 'x-openai-api-key': PROVIDER_KEY },
    });

  it('sends the schema as a structured output and returns the validated answer parsed as data.aiResult', async () => {
    const response = await capture({ openaiPrompt: 'Read the price', openaiSchema: JSON.stringify(SCHEMA), returnFile: 'false' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { aiResult: unknown } };
    expect(body.data.aiResult).toEqual({ product: 'Widget', price: 42, currency: 'EUR' });
    expect(stub.last!.problems).toEqual([]);
    expect(stub.last!.responseFormat).toEqual({
      type: 'json_schema',
      json_schema: { name: 'daguerre_result', schema: SCHEMA, strict: false },
    });
  });

  it('puts the answer as JSON text in X-Service-AI-Result in binary mode', async () => {
    const response = await capture({ openaiPrompt: 'Read the price', openaiSchema: JSON.stringify(SCHEMA) });
    expect(response.status).toBe(200);
    expect(JSON.parse(decodeURIComponent(response.headers.get('x-service-ai-result')!))).toEqual({
      product: 'Widget',
      price: 42,
      currency: 'EUR',
    });
  });

  it('answers 502 AI_RESULT_INVALID naming what does not match, charging nothing', async () => {
    const before = await service.client.usage();
    for (const [answer, why] of [
      [
        JSON.stringify({ price: 'forty-two', currency: 'GBP' }),
        /\/price must be number.*\/currency must be equal to one of the allowed values/,
      ],
      [JSON.stringify({ product: 'Widget' }), /must have required property 'price'/],
      ['The price is 42 euros.', /the answer is not JSON/],
    ] as const) {
      stub.reply(answer);
      const response = await capture({ openaiPrompt: 'Read the price', openaiSchema: JSON.stringify(SCHEMA), returnFile: 'false' });
      expect(response.status).toBe(502);
      const error = ((await response.json()) as ErrorBody).error;
      expect(error.code).toBe('AI_RESULT_INVALID');
      expect(error.message).toMatch(/^AI analysis failed: the model's answer does not match openaiSchema/);
      expect(error.message).toMatch(why);
    }
    expect((await service.client.usage()).credits.remaining).toBe(before.credits.remaining);
  });

  it('refuses a schema that is not JSON, not an object schema, not compilable, or without a prompt, before any work', async () => {
    const requestsBefore = stub.requests.length;
    for (const [schema, message] of [
      ['{not json', 'openaiSchema must be a JSON Schema written as a JSON string'],
      ['{"type":"array"}', 'root has "type": "object"'],
      ['{"type":"object","properties":{"a":{"type":"no-such-type"}}}', 'openaiSchema is not a usable JSON Schema'],
    ]) {
      const response = await capture({ openaiPrompt: 'x', openaiSchema: schema!, returnFile: 'false' });
      expect(response.status).toBe(400);
      const error = ((await response.json()) as ErrorBody).error;
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.message).toContain(message);
      expect(error.details).toEqual([expect.objectContaining({ field: 'openaiSchema' })]);
    }
    const noPrompt = await capture({ openaiSchema: JSON.stringify(SCHEMA) });
    expect(noPrompt.status).toBe(400);
    expect(((await noPrompt.json()) as ErrorBody).error.message).toContain('openaiSchema needs openaiPrompt');
    expect(stub.requests.length).toBe(requestsBefore);
  });

  it('caches AI answers by image and question with cacheEnabled: a new prompt or schema asks again', async () => {
    const html = `${PAGE}<!-- ai cache ${Date.now()} -->`;
    const ask = (prompt: string, schema?: object) =>
      capture({
        html,
        openaiPrompt: prompt,
        ...(schema ? { openaiSchema: JSON.stringify(schema) } : {}),
        cacheEnabled: 'true',
        returnFile: 'false',
      }).then(async (response) => ((await response.json()) as { data: { aiResult: unknown } }).data.aiResult);
    const before = stub.requests.length;
    expect(await ask('Read the price', SCHEMA)).toEqual({ product: 'Widget', price: 42, currency: 'EUR' });
    stub.reply(JSON.stringify({ price: 7, currency: 'USD' }));
    // Same image, prompt and schema: answered from the cache, the provider is not asked.
    expect(await ask('Read the price', SCHEMA)).toEqual({ product: 'Widget', price: 42, currency: 'EUR' });
    expect(stub.requests.length).toBe(before + 1);
    // Another schema, or another prompt: asked again.
    expect(await ask('Read the price', { ...SCHEMA, required: ['price'] })).toEqual({ price: 7, currency: 'USD' });
    stub.reply('plain text answer');
    expect(await ask('Describe the page')).toEqual({ text: 'plain text answer', model: 'stub-vision' });
    expect(stub.requests.length).toBe(before + 3);
  });

  it('analyses a markdown capture from a PNG of the page', async () => {
    const response = await capture({
      format: 'markdown',
      openaiPrompt: 'Read the price',
      openaiSchema: JSON.stringify(SCHEMA),
      returnFile: 'false',
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { content: string; aiResult: unknown } };
    expect(body.data.content).toContain('Price: 42 EUR');
    expect(body.data.aiResult).toEqual({ product: 'Widget', price: 42, currency: 'EUR' });
    expect(stub.last!.imageUrl).toMatch(/^data:image\/png;base64,/);
  });
});

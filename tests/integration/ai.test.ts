import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AI_RESULT_HEADER_MAX_BYTES } from '../../server/src/services/ai-analysis.js';
import { decodePng, near } from '../helpers/images.js';
import { dataUrlBytes, OpenAiStub } from '../helpers/openai-stub.js';
import { capturedLogLines, captureQuery, startTestService, type TestService } from '../helpers/test-service.js';

const PROVIDER_KEY = 'sk-test-PROVIDER-0123456789abcdefSECRET';
const MODEL = 'gpt-test-vision';
const PAGE = '<html><body style="margin:0;background:rgb(30,90,200)"><h1 style="color:white">Analyse me</h1></body></html>';

interface ErrorBody {
  success: false;
  error: { code: string; message: string };
}

describe('AI analysis of the capture through an OpenAI-compatible provider', () => {
  let stub: OpenAiStub;
  let service: TestService;

  beforeAll(async () => {
    stub = await new OpenAiStub(PROVIDER_KEY).start();
    service = await startTestService({ env: { OPENAI_BASE_URL: stub.url, OPENAI_MODEL: MODEL, OPENAI_TIMEOUT_MS: '1500' } });
  });
  afterAll(async () => {
    await service?.stop();
    await stub?.stop();
  });
  beforeEach(() => {
    stub.reply('A blue page with the heading "Analyse me".');
  });

  const capture = (params: Record<string, string | number | boolean>, providerKey: string | null = PROVIDER_KEY) =>
    service.get(`/capture?${captureQuery(params)}`, {
      headers: { 'x-api-key': service.apiKey, ...(providerKey ? { 'x-openai-api-key': providerKey } : {}) },
    });

  it('returns data.aiResult in JSON mode, having sent the prompt, a PNG of the page and the key as bearer', async () => {
    const before = stub.requests.length;
    const result = await service.client.captureJson({
      html: PAGE,
      viewportWidth: 640,
      viewportHeight: 360,
      openaiPrompt: 'Describe the page in one sentence.',
      openaiApiKey: PROVIDER_KEY,
    });
    expect(result.data.aiResult).toEqual({ text: 'A blue page with the heading "Analyse me".', model: MODEL });
    expect(stub.requests).toHaveLength(before + 1);
    const sent = stub.last!;
    expect(sent.problems).toEqual([]);
    expect(sent.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    expect(sent.model).toBe(MODEL);
    expect(sent.prompt).toBe('Describe the page in one sentence.');
    const image = dataUrlBytes(sent.imageUrl!);
    expect(image.mime).toBe('image/png');
    // The very image the caller got back.
    expect(image.bytes.equals(Buffer.from(result.data.imageData!.split(',')[1]!, 'base64'))).toBe(true);
    expect(decodePng(image.bytes).width).toBe(640);
  });

  it('accepts the key as the openaiApiKey query parameter too', async () => {
    const response = await service.get(
      `/capture?${captureQuery({ html: PAGE, viewportWidth: 300, viewportHeight: 200, openaiPrompt: 'What colour?', openaiApiKey: PROVIDER_KEY, returnFile: false, apiKey: service.apiKey })}`,
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { aiResult: { text: string } } };
    expect(body.data.aiResult.text).toContain('blue page');
    expect(stub.last!.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
  });

  it('puts a header-safe result in X-Service-AI-Result in binary mode: newlines and tabs flattened, non-ASCII and % percent-encoded', async () => {
    stub.reply('Line one\nLine two\r\n\tTabbed — café at 100% 😀');
    const response = await capture({ html: PAGE, viewportWidth: 300, viewportHeight: 200, openaiPrompt: 'Describe' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    const header = response.headers.get('x-service-ai-result')!;
    expect(header).toBe('Line one Line two Tabbed %E2%80%94 caf%C3%A9 at 100%25 %F0%9F%98%80');
    expect(decodeURIComponent(header)).toBe('Line one Line two Tabbed — café at 100% 😀');
    expect(response.headers.get('x-service-ai-result-truncated')).toBe('false');
    expect(decodePng(new Uint8Array(await response.arrayBuffer())).width).toBe(300);
  });

  it(`cuts the header to ${AI_RESULT_HEADER_MAX_BYTES} bytes without splitting an escape, says so, and keeps the full text in JSON mode`, async () => {
    const long = `${'The quick brown fox jumps over the lazy dog. '.repeat(30)}Ünïcödé ending ${'é'.repeat(400)}`;
    stub.reply(long);
    const binary = await capture({ html: PAGE, viewportWidth: 300, viewportHeight: 200, openaiPrompt: 'Describe at length' });
    const header = binary.headers.get('x-service-ai-result')!;
    expect(binary.headers.get('x-service-ai-result-truncated')).toBe('true');
    expect(Buffer.byteLength(header)).toBeLessThanOrEqual(AI_RESULT_HEADER_MAX_BYTES);
    expect(Buffer.byteLength(header)).toBeGreaterThan(AI_RESULT_HEADER_MAX_BYTES - 6);
    expect(long.startsWith(decodeURIComponent(header))).toBe(true);

    const json = await capture({
      html: PAGE,
      viewportWidth: 300,
      viewportHeight: 200,
      openaiPrompt: 'Describe at length',
      returnFile: false,
    });
    const body = (await json.json()) as { data: { aiResult: { text: string } } };
    expect(body.data.aiResult.text).toBe(long);
    expect(json.headers.get('x-service-ai-result')).toBeNull();
  });

  it('analyses a pdf capture from a PNG render of the same page', async () => {
    const response = await capture({
      html: PAGE,
      format: 'pdf',
      viewportWidth: 800,
      viewportHeight: 600,
      openaiPrompt: 'What is in this document?',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(
      Buffer.from(await response.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    expect(response.headers.get('x-service-ai-result')).toBe('A blue page with the heading "Analyse me".');
    const image = dataUrlBytes(stub.last!.imageUrl!);
    expect(image.mime).toBe('image/png');
    const png = decodePng(image.bytes);
    expect([png.width, png.height]).toEqual([800, 600]);
    // The page's own background colour, so it is this page and not a blank one.
    expect(near(png.pixel(790, 590), [30, 90, 200])).toBe(true);
  });

  it('sends a jpeg capture as image/jpeg', async () => {
    await capture({ html: PAGE, format: 'jpeg', viewportWidth: 300, viewportHeight: 200, openaiPrompt: 'Describe' });
    expect(stub.last!.problems).toEqual([]);
    expect(dataUrlBytes(stub.last!.imageUrl!).mime).toBe('image/jpeg');
  });

  it('runs the analysis per request on a cache hit, with that request’s prompt, still charging nothing', async () => {
    const html = `${PAGE}<!-- cache ${Date.now()} -->`;
    stub.reply('first answer');
    const first = await capture({
      html,
      viewportWidth: 300,
      viewportHeight: 200,
      cacheEnabled: true,
      openaiPrompt: 'first prompt',
      returnFile: false,
    });
    expect(first.headers.get('x-cache')).toBe('MISS');
    const usage = await service.client.usage();
    stub.reply('second answer');
    const second = await capture({
      html,
      viewportWidth: 300,
      viewportHeight: 200,
      cacheEnabled: true,
      openaiPrompt: 'second prompt',
      returnFile: false,
    });
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(((await second.json()) as { data: { aiResult: { text: string } } }).data.aiResult.text).toBe('second answer');
    expect(stub.last!.prompt).toBe('second prompt');
    expect((await service.client.usage()).credits).toEqual(usage.credits);
  });

  it('rejects a prompt without a provider key before any work (400 VALIDATION_ERROR)', async () => {
    const response = await capture({ html: PAGE, openaiPrompt: 'Describe' }, null);
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error.code).toBe('VALIDATION_ERROR');
  });

  describe('provider failures fail the request naming the AI stage, charge nothing and never echo the key', () => {
    const cases: Array<{ name: string; arrange: () => void; key?: string; message: string }> = [
      {
        name: '401 for a wrong key',
        arrange: () => stub.reply('unused'),
        key: 'sk-wrong-KEY-that-must-not-leak-42',
        message: 'AI analysis failed: the provider answered 401 (invalid provider key); nothing was charged',
      },
      {
        name: '429',
        arrange: () => stub.fail(429),
        message: 'AI analysis failed: the provider answered 429 (rate limited or out of quota at the provider); nothing was charged',
      },
      {
        name: '500',
        arrange: () => stub.fail(500),
        message: 'AI analysis failed: the provider answered 500 (provider error); nothing was charged',
      },
      {
        name: 'a provider that never answers',
        arrange: () => stub.hang(),
        message: 'AI analysis failed: the provider did not answer within 1500 ms (timeout); nothing was charged',
      },
    ];

    for (const testCase of cases) {
      it(testCase.name, async () => {
        testCase.arrange();
        const key = testCase.key ?? PROVIDER_KEY;
        const before = await service.client.usage();
        const logLinesBefore = capturedLogLines.length;
        for (const returnFile of [true, false]) {
          const response = await capture(
            { html: PAGE, viewportWidth: 300, viewportHeight: 200, openaiPrompt: 'Describe', returnFile },
            key,
          );
          expect(response.status).toBe(500);
          const text = await response.text();
          expect(text).not.toContain(key);
          expect(text).not.toContain(key.slice(0, 12));
          const body = JSON.parse(text) as ErrorBody;
          expect(body.error).toEqual({ code: 'OPERATION_FAILED', message: testCase.message });
        }
        expect((await service.client.usage()).credits).toEqual(before.credits);
        const newLines = capturedLogLines.slice(logLinesBefore).join('\n');
        expect(newLines).toContain('AI analysis failed');
        expect(newLines).not.toContain(key);
        expect(newLines).not.toContain(key.slice(0, 12));
        const ledger = await service.runtime.credits.ledger(service.organizationId, 2);
        expect(ledger.map((row) => row.status)).toEqual(['released', 'released']);
        expect(ledger.map((row) => row.error_code)).toEqual(['OPERATION_FAILED', 'OPERATION_FAILED']);
      });
    }
  });

  it('never wrote a provider key into any log line or the ledger', async () => {
    const all = capturedLogLines.join('\n');
    expect(all).not.toContain(PROVIDER_KEY);
    const ledger = JSON.stringify(await service.runtime.credits.ledger(service.organizationId, 500));
    expect(ledger).not.toContain(PROVIDER_KEY);
  });
});

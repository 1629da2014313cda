import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, DaguerreError, type CaptureResult } from '../../client/src/index.js';

/** What the canned server saw, so tests can assert the wire format the client produced. */
interface ReceivedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

interface CannedResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

let server: Server;
let baseUrl: string;
let received: ReceivedRequest[] = [];
let responses: CannedResponse[] = [];

function errorBody(code: string, message: string, details?: unknown): string {
  return JSON.stringify({ success: false, error: { code, message, ...(details === undefined ? {} : { details }) } });
}

function answer(req: IncomingMessage, res: ServerResponse, body: string) {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  received.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body });
  // Responses are served in order; a test that gets more requests than it canned fails loudly.
  const canned = responses.shift() ?? { status: 599, body: 'no canned response left' };
  res.writeHead(canned.status, canned.headers ?? {});
  res.end(canned.body ?? '');
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => answer(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

beforeEach(() => {
  received = [];
  responses = [];
});

/** Runs `promise`, expecting a DaguerreError, and returns it for assertions. */
async function expectDaguerreError(promise: Promise<unknown>): Promise<DaguerreError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(DaguerreError);
  return error as DaguerreError;
}

describe('client capture()', () => {
  it('returns the exact bytes, file name and headers of a binary capture, sending options as a query', async () => {
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x10, 0x80]);
    responses.push({
      status: 200,
      headers: {
        'content-type': 'image/png',
        'content-disposition': 'inline; filename="capture-3f2a.png"',
        'x-ratelimit-limit': '40',
        'x-ratelimit-remaining': '39',
      },
      body: png,
    });
    const client = createClient({ baseUrl: `${baseUrl}/`, apiKey: 'key-123' });

    const file = await client.capture({
      url: 'https://example.com/a?b=c&d=e',
      fullPage: true,
      viewportWidth: 1280,
      removeSelectors: ['.ad', '#cookie'],
      headers: { 'Accept-Language': 'de-DE' },
      openaiPrompt: 'describe',
      openaiApiKey: 'provider-key',
    });

    expect(file.bytes).toEqual(png);
    expect(file.fileName).toBe('capture-3f2a.png');
    expect(file.contentType).toBe('image/png');
    expect(file.headers['x-ratelimit-remaining']).toBe('39');

    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.method).toBe('GET');
    expect(request?.path).toBe('/capture');
    expect(request?.headers['x-api-key']).toBe('key-123');
    expect(request?.headers['x-openai-api-key']).toBe('provider-key');
    expect(Object.fromEntries(request?.query ?? [])).toEqual({
      url: 'https://example.com/a?b=c&d=e',
      fullPage: 'true',
      viewportWidth: '1280',
      removeSelectors: '.ad,#cookie',
      headers: '{"Accept-Language":"de-DE"}',
      openaiPrompt: 'describe',
      returnFile: 'true',
    });
  });

  it('sends html longer than 4000 characters by POST with a JSON body', async () => {
    responses.push({
      status: 200,
      headers: { 'content-type': 'application/pdf', 'content-disposition': 'inline; filename="big.pdf"' },
      body: '%PDF-1.7',
    });
    const client = createClient({ baseUrl, apiKey: 'key-123' });
    const html = `<main>${'x'.repeat(4_001)}</main>`;

    const file = await client.capture({
      html,
      format: 'pdf',
      fullPage: true,
      blockResources: ['font', 'media'],
      headers: { 'X-Trace': '1' },
    });

    expect(file.fileName).toBe('big.pdf');
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/capture');
    expect([...(request?.query.keys() ?? [])]).toEqual([]);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['x-api-key']).toBe('key-123');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      html,
      format: 'pdf',
      fullPage: true,
      blockResources: ['font', 'media'],
      headers: { 'X-Trace': '1' },
      returnFile: true,
    });
  });

  it('keeps html of exactly 4000 characters in the query', async () => {
    responses.push({ status: 200, headers: { 'content-type': 'image/png' }, body: Uint8Array.from([1]) });
    const client = createClient({ baseUrl, apiKey: 'key-123' });
    const html = 'y'.repeat(4_000);

    const file = await client.capture({ html });

    expect(received[0]?.method).toBe('GET');
    expect(received[0]?.query.get('html')).toBe(html);
    // No Content-Disposition: the name falls back to the format's extension.
    expect(file.fileName).toBe('capture.png');
  });

  it('switches to POST when a list entry contains a comma, which the query form would split', async () => {
    responses.push({ status: 200, headers: { 'content-type': 'image/png' }, body: Uint8Array.from([1]) });
    const client = createClient({ baseUrl, apiKey: 'key-123' });

    await client.capture({ url: 'https://example.com', removeSelectors: [':is(.ad,.promo)', '#cookie'] });

    expect(received[0]?.method).toBe('POST');
    expect(JSON.parse(received[0]?.body ?? '')).toMatchObject({ removeSelectors: [':is(.ad,.promo)', '#cookie'] });
  });
});

describe('client errors', () => {
  it('turns the spec error body into a DaguerreError with status, code and details', async () => {
    const details = [{ field: 'viewportWidth', message: 'viewportWidth must be a number from 100 to 7680 (pixels)', value: 'wide' }];
    responses.push({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: errorBody('VALIDATION_ERROR', 'Validation failed', details),
    });
    const client = createClient({ baseUrl, apiKey: 'key-123' });

    const error = await expectDaguerreError(client.capture({ url: 'https://example.com' }));

    expect(error.status).toBe(400);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toBe('Validation failed');
    expect(error.details).toEqual(details);
    expect(error.retryAfterSeconds).toBeUndefined();
  });

  it('reports a non-JSON error body as INTERNAL_ERROR with the real status', async () => {
    responses.push({ status: 502, headers: { 'content-type': 'text/html' }, body: '<html><body>Bad Gateway</body></html>' });
    const client = createClient({ baseUrl, apiKey: 'key-123' });

    const error = await expectDaguerreError(client.usage());

    expect(error.status).toBe(502);
    expect(error.code).toBe('INTERNAL_ERROR');
    expect(error.message).toContain('Bad Gateway');
  });

  it('throws the 401 of usage() as a DaguerreError', async () => {
    responses.push({ status: 401, headers: { 'content-type': 'application/json' }, body: errorBody('INVALID_API_KEY', 'Invalid API key') });
    const client = createClient({ baseUrl, apiKey: 'wrong' });

    const error = await expectDaguerreError(client.usage());

    expect(error).toMatchObject({ status: 401, code: 'INVALID_API_KEY', message: 'Invalid API key' });
    expect(received[0]?.headers['x-api-key']).toBe('wrong');
  });
});

describe('client retry', () => {
  const rateLimited: CannedResponse = {
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': '1', 'x-ratelimit-remaining': '0' },
    body: errorBody('RATE_LIMIT_EXCEEDED', 'Rate limit exceeded'),
  };
  const captureResult: CaptureResult = {
    success: true,
    data: {
      requestId: '0f8fad5b-d9cb-469f-a165-70867728950e',
      fileName: 'a.png',
      processingTime: 12,
      fileSize: 3,
      imageData: 'data:image/png;base64,AAAA',
      page: {
        status: 200,
        finalUrl: 'https://example.com/',
        title: 'Example',
        width: 1920,
        height: 1080,
        truncated: false,
        waitTimedOut: false,
        stillGrowing: false,
        inspectionTimedOut: false,
      },
      quality: { ok: true, findings: [] },
    },
  };
  const jsonOk: CannedResponse = { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(captureResult) };

  it('retries a 429 once after Retry-After when retry is enabled', async () => {
    responses.push(rateLimited, jsonOk);
    const client = createClient({ baseUrl, apiKey: 'key-123', retry: { maxRetries: 1 } });

    const started = Date.now();
    const result = await client.captureJson({ url: 'https://example.com' });

    expect(result).toEqual(captureResult);
    expect(received).toHaveLength(2);
    expect(received.map((r) => r.query.get('returnFile'))).toEqual(['false', 'false']);
    // Retry-After: 1 is honoured (small slack for timer granularity).
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('does not retry a 429 when retry is not configured', async () => {
    responses.push(rateLimited, jsonOk);
    const client = createClient({ baseUrl, apiKey: 'key-123' });

    const error = await expectDaguerreError(client.captureJson({ url: 'https://example.com' }));

    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMIT_EXCEEDED', retryAfterSeconds: 1 });
    expect(error.headers['x-ratelimit-remaining']).toBe('0');
    expect(received).toHaveLength(1);
  });

  it('gives up after maxRetries, waiting at most maxDelayMs', async () => {
    responses.push(
      { ...rateLimited, headers: { ...rateLimited.headers, 'retry-after': '120' } },
      { ...rateLimited, status: 503, body: errorBody('SERVICE_UNAVAILABLE', 'Busy') },
    );
    const client = createClient({ baseUrl, apiKey: 'key-123', retry: { maxRetries: 1, maxDelayMs: 20 } });

    const started = Date.now();
    const error = await expectDaguerreError(client.capture({ url: 'https://example.com' }));

    expect(error).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    expect(received).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('never retries other errors, even with retry enabled', async () => {
    responses.push(
      { status: 500, headers: { 'content-type': 'application/json' }, body: errorBody('OPERATION_FAILED', 'Capture failed') },
      jsonOk,
    );
    const client = createClient({ baseUrl, apiKey: 'key-123', retry: { maxRetries: 3, maxDelayMs: 10 } });

    const error = await expectDaguerreError(client.captureJson({ url: 'https://example.com' }));

    expect(error.code).toBe('OPERATION_FAILED');
    expect(received).toHaveLength(1);
  });
});

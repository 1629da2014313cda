import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaguerreError } from '../../client/src/index.js';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { decodePng, jpegSize, near, pdfPages, webpSize } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const RED_PAGE = '<html><body style="margin:0;background:rgb(220,20,60)"><h1 style="color:white">Daguerre</h1></body></html>';

async function expectApiError(promise: Promise<unknown>, status: number, code: string, message?: string) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DaguerreError);
  const apiError = error as DaguerreError;
  expect(apiError.status).toBe(status);
  expect(apiError.code).toBe(code);
  if (message) expect(apiError.message).toBe(message);
}

describe.each(DATABASE_KINDS)('first real captures, auth, credits and usage (%s)', (database) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ database, credits: 100 });
  });
  afterAll(async () => service?.stop());

  it('renders html at the default 1920×1080 as PNG with the spec headers', async () => {
    const response = await service.get(`/capture?html=${encodeURIComponent(RED_PAGE)}&apiKey=${service.apiKey}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get('content-disposition')).toMatch(/^inline; filename="capture-[0-9a-f-]{36}\.png"$/);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
    expect(response.headers.get('x-ratelimit-limit')).toBe('40');
    const image = decodePng(bytes);
    expect([image.width, image.height]).toEqual([1920, 1080]);
    expect(near(image.pixel(1900, 1000), [220, 20, 60])).toBe(true);
  });

  it('renders jpeg (image/jpeg), webp and pdf through the typed client', async () => {
    const jpeg = await service.client.capture({ html: RED_PAGE, format: 'jpeg', imageQuality: 70 });
    expect(jpeg.contentType).toBe('image/jpeg');
    expect(jpegSize(jpeg.bytes)).toEqual({ width: 1920, height: 1080 });
    const webp = await service.client.capture({ html: RED_PAGE, format: 'webp' });
    expect(webp.contentType).toBe('image/webp');
    expect(webpSize(webp.bytes)).toEqual({ width: 1920, height: 1080 });
    const pdf = await service.client.capture({ html: RED_PAGE, format: 'pdf' });
    expect(pdf.contentType).toBe('application/pdf');
    expect(Buffer.from(pdf.bytes.subarray(0, 5)).toString()).toBe('%PDF-');
    expect((await pdfPages(pdf.bytes)).count).toBe(1);
  });

  it('answers JSON mode with requestId, fileName, processingTime, fileSize and a data URI', async () => {
    const result = await service.client.captureJson({ html: RED_PAGE, viewportWidth: 400, viewportHeight: 300 });
    expect(result.success).toBe(true);
    expect(result.data.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.data.fileName).toBe(`capture-${result.data.requestId}.png`);
    expect(result.data.processingTime).toBeGreaterThan(0);
    const [prefix, base64] = result.data.imageData!.split(',');
    expect(prefix).toBe('data:image/png;base64');
    const bytes = Buffer.from(base64!, 'base64');
    expect(bytes.length).toBe(result.data.fileSize);
    expect(decodePng(bytes).width).toBe(400);
  });

  it('has no imageData for pdf in JSON mode', async () => {
    const result = await service.client.captureJson({ html: RED_PAGE, format: 'pdf' });
    expect(result.data.imageData).toBeUndefined();
    expect(result.data.fileName).toMatch(/\.pdf$/);
    expect(result.data.fileSize).toBeGreaterThan(500);
  });

  it('accepts the same options as a JSON body on POST /capture (large html)', async () => {
    const filler = `<div style="display:none">${'lorem ipsum '.repeat(7_000)}</div>`;
    const response = await service.get('/capture', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
      body: JSON.stringify({ html: RED_PAGE + filler, viewportWidth: 300, viewportHeight: 200, returnFile: false }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { imageData: string } };
    expect(decodePng(Buffer.from(body.data.imageData.split(',')[1]!, 'base64')).width).toBe(300);
  });

  it('answers the three 401s with the exact spec messages', async () => {
    await expectApiError(service.clientFor('').usage(), 401, 'API_KEY_REQUIRED', 'API key required');
    await expectApiError(service.clientFor('rs_unknown').usage(), 401, 'INVALID_API_KEY', 'Invalid API key');
    const expired = await service.runtime.apiKeys.create({
      organizationId: service.organizationId,
      name: 'old',
      expiresAt: new Date(Date.now() - 1000),
    });
    await expectApiError(service.clientFor(expired.key).capture({ html: RED_PAGE }), 401, 'API_KEY_EXPIRED', 'API key expired');
    const missing = await service.get(`/capture?html=x`);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ success: false, error: { code: 'API_KEY_REQUIRED', message: 'API key required' } });
  });

  it('accepts the key from the query or the X-API-Key header alike', async () => {
    const viaQuery = await service.get(`/usage?apiKey=${service.apiKey}`);
    const viaHeader = await service.get(`/usage`, { headers: { 'X-API-Key': service.apiKey } });
    expect(viaQuery.status).toBe(200);
    expect(viaHeader.status).toBe(200);
  });

  it('charges 1 credit per successful capture and nothing for a failed one', async () => {
    const before = await service.client.usage();
    await service.client.capture({ html: RED_PAGE, viewportWidth: 200, viewportHeight: 200 });
    const afterSuccess = await service.client.usage();
    expect(afterSuccess.credits.remaining).toBe(before.credits.remaining - 1);
    expect(afterSuccess.credits.usedThisPeriod).toBe(before.credits.usedThisPeriod + 1);
    await expectApiError(service.client.capture({ html: RED_PAGE, clipSelector: '#does-not-exist' }), 400, 'INVALID_INPUT');
    await expectApiError(service.client.capture({ html: RED_PAGE, viewportWidth: 5 }), 400, 'VALIDATION_ERROR');
    const afterFailures = await service.client.usage();
    expect(afterFailures.credits).toEqual(afterSuccess.credits);
    const ledger = await service.runtime.credits.ledger(service.organizationId, 500);
    const statuses = ledger.map((row) => row.status as string);
    expect(statuses.filter((s) => s === 'charged')).toHaveLength(afterFailures.credits.usedThisPeriod);
    expect(statuses).toContain('released');
    expect(statuses).not.toContain('reserved');
  });

  it('reports every usage field from real data', async () => {
    const usage = await service.client.usage();
    expect(usage.credits.totalMonthlyAllocation).toBe(100);
    expect(usage.credits.remaining + usage.credits.usedThisPeriod).toBe(100);
    expect(usage.credits.includesCreditRollover).toBe(false);
    expect(usage.credits.billingCycle).toBe('monthly');
    expect(usage.credits.subscriptionStatus).toBe('active');
    expect(new Date(usage.credits.periodEnd).getTime()).toBeGreaterThan(new Date(usage.credits.periodStart).getTime());
    expect(usage.credits.plan).toMatchObject({ tier: 'test', creditsPerMonth: 100 });
    expect(usage.credits.plan!.id).toMatch(/^[0-9a-f-]{36}$/);
    // concurrency (docs/render-slots.md) extends the usage body: without a plan limit, what one instance holds (MAX_CONCURRENCY 2 + MAX_QUEUE 32).
    expect(usage.rateLimits).toEqual({
      capture: { windowMs: 60000, maxRequestsPerWindow: 40 },
      concurrency: { maxConcurrentCaptures: 34 },
    });
  });

  it('answers unknown routes with the error body', async () => {
    const response = await service.get('/nothing-here');
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
  });

  it('serves the OpenAPI document and Swagger UI', async () => {
    const doc = (await (await service.get('/openapi.json')).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/capture', '/usage']));
    const docs = await service.get('/docs/');
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger-ui');
  });
});

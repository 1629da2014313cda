import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '@daguerre/contract';
import { DATABASE_KINDS } from '../helpers/databases.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

type Case = [name: string, query: Record<string, string>, field: string, code?: string];

const html = '<p>x</p>';
const twentyOneHeaders = JSON.stringify(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])));

/** One case per rule of the parameter tables (docs/reference/api.md) (and the limits this server documents). */
const CASES: Case[] = [
  ['url must be http(s)', { url: 'ftp://example.com/x' }, 'url'],
  ['url must be a URL', { url: 'not a url' }, 'url'],
  ['url and html together', { url: 'https://example.com', html }, 'url'],
  ['neither url nor html', { format: 'png' }, 'html'],
  ['format enum', { html, format: 'bmp' }, 'format'],
  ['pdfPageLayout enum', { html, pdfPageLayout: 'spread' }, 'pdfPageLayout'],
  ['returnFile boolean', { html, returnFile: 'yes' }, 'returnFile'],
  ['imageQuality below 1', { html, imageQuality: '0' }, 'imageQuality'],
  ['imageQuality above 100', { html, imageQuality: '101' }, 'imageQuality'],
  ['imageQuality not a number', { html, imageQuality: 'high' }, 'imageQuality'],
  ['scaleFactor below 0.1', { html, scaleFactor: '0.05' }, 'scaleFactor'],
  ['scaleFactor above 3', { html, scaleFactor: '3.1' }, 'scaleFactor'],
  ['device unknown', { html, device: 'nokia-3310' }, 'device'],
  ['viewportWidth not numeric', { html, viewportWidth: 'abc' }, 'viewportWidth'],
  ['viewportWidth too small', { html, viewportWidth: '10' }, 'viewportWidth'],
  ['viewportHeight too large', { html, viewportHeight: '99999' }, 'viewportHeight'],
  ['viewport area too large', { html, viewportWidth: '7680', viewportHeight: '7680', scaleFactor: '2' }, 'scaleFactor'],
  ['theme enum', { html, theme: 'blue' }, 'theme'],
  ['fullPage boolean', { html, fullPage: 'maybe' }, 'fullPage'],
  ['fullPageScroll boolean', { html, fullPageScroll: 'on' }, 'fullPageScroll'],
  ['fullPageScrollDuration negative', { html, fullPageScrollDuration: '-1' }, 'fullPageScrollDuration'],
  ['clipSelector empty', { html, clipSelector: '' }, 'clipSelector'],
  ['delay negative', { html, delay: '-5' }, 'delay'],
  ['delay above maximum', { html, delay: String(LIMITS.delayMaxMs + 1) }, 'delay'],
  ['waitUntil enum', { html, waitUntil: 'never' }, 'waitUntil'],
  ['waitForSelector empty', { html, waitForSelector: '' }, 'waitForSelector'],
  ['removeAds boolean', { html, removeAds: 'please' }, 'removeAds'],
  ['removeCookieBanners boolean', { html, removeCookieBanners: 'please' }, 'removeCookieBanners'],
  ['removeSelectors too many', { html, removeSelectors: Array.from({ length: 51 }, (_, i) => `.a${i}`).join(',') }, 'removeSelectors'],
  ['blockResources enum', { html, blockResources: 'image,video' }, 'blockResources'],
  ['blockUrls too many', { html, blockUrls: Array.from({ length: 51 }, (_, i) => `*ad${i}*`).join(',') }, 'blockUrls'],
  ['userAgent too long', { html, userAgent: 'x'.repeat(1025) }, 'userAgent'],
  ['headers not JSON', { html, headers: '{nope' }, 'headers'],
  ['headers not an object', { html, headers: '["a"]' }, 'headers'],
  ['headers more than 20', { html, headers: twentyOneHeaders }, 'headers'],
  ['headers blocked name', { html, headers: '{"Host":"evil.example"}' }, 'headers'],
  ['headers blocked name, other case', { html, headers: '{"proxy-authorization":"Basic x"}' }, 'headers'],
  ['headers CR/LF injection', { html, headers: JSON.stringify({ 'X-A': 'a\r\nSet-Cookie: x=1' }) }, 'headers'],
  ['headers invalid name', { html, headers: '{"X A":"b"}' }, 'headers'],
  ['openaiPrompt without key', { html, openaiPrompt: 'describe' }, 'openaiApiKey'],
  ['openaiApiKey without prompt', { html, openaiApiKey: 'sk-test' }, 'openaiPrompt'],
  ['latitude without longitude', { html, latitude: '10' }, 'longitude'],
  ['longitude without latitude', { html, longitude: '10' }, 'latitude'],
  ['latitude out of range', { html, latitude: '91', longitude: '0' }, 'latitude'],
  ['longitude out of range', { html, latitude: '0', longitude: '-181' }, 'longitude'],
  ['proxyUrl not a URL', { html, proxyUrl: 'proxy:8080' }, 'proxyUrl'],
  ['proxy credentials without proxyUrl', { html, proxyUsername: 'u', proxyPassword: 'p' }, 'proxyUrl'],
  ['cacheEnabled boolean', { html, cacheEnabled: 'si' }, 'cacheEnabled'],
  ['cacheTtl below minimum', { html, cacheTtl: '0' }, 'cacheTtl'],
  ['cacheTtl above maximum', { html, cacheTtl: String(LIMITS.cacheTtlMaxSeconds + 1) }, 'cacheTtl'],
  ['requestStorageEnabled boolean', { html, requestStorageEnabled: 'x' }, 'requestStorageEnabled'],
  ['storage fields missing', { html, requestStorageEnabled: 'true' }, 'requestStorageBucket', 'MISSING_REQUIRED_FIELD'],
  ['requestStorageEndpoint not a URL', { html, requestStorageEndpoint: 's3 please' }, 'requestStorageEndpoint'],
  ['unknown parameter', { html, fullpage: 'true' }, 'fullpage'],
];

describe.each(DATABASE_KINDS)('validation of every rule (%s)', (database) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ database, env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => service?.stop());

  it.each(CASES)('%s → 400 naming the field', async (_name, query, field, code = 'VALIDATION_ERROR') => {
    const response = await service.get(`/capture?${new URLSearchParams(query)}`, { headers: { 'X-API-Key': service.apiKey } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as {
      success: boolean;
      error: { code: string; message: string; details: Array<{ field: string; message: string; value: unknown }> };
    };
    expect(body.success).toBe(false);
    expect(body.error.code).toBe(code);
    const issue = body.error.details.find((d) => d.field === field);
    expect(issue, JSON.stringify(body.error.details)).toBeDefined();
    expect(issue!.message).toContain(field);
    expect(body.error.message).toContain(field);
  });

  it('reports the rejected value and lists valid values for enums', async () => {
    const response = await service.get(`/capture?html=x&format=bmp`, { headers: { 'X-API-Key': service.apiKey } });
    const body = (await response.json()) as { error: { details: Array<{ field: string; message: string; value: unknown }> } };
    expect(body.error.details).toEqual([
      {
        field: 'format',
        message: 'format must be one of: png, webp, jpeg, pdf, html, markdown, text, mhtml, mp4, webm, gif',
        value: 'bmp',
      },
    ]);
  });

  it('never echoes a rejected secret', async () => {
    const response = await service.get(`/capture?html=x&openaiApiKey=${'k'.repeat(2000)}&openaiPrompt=hi`, {
      headers: { 'X-API-Key': service.apiKey },
    });
    const text = await response.text();
    expect(response.status).toBe(400);
    expect(text).not.toContain('kkkkkkkkkk');
  });

  it('accepts "1"/"0" as booleans and rejects anything else', async () => {
    const ok = await service.get(`/capture?html=${encodeURIComponent('<p>x</p>')}&returnFile=0&viewportWidth=320&viewportHeight=200`, {
      headers: { 'X-API-Key': service.apiKey },
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { success: boolean }).success).toBe(true);
  });

  it('answers an html over the maximum in a GET with the JSON 400, not a bare 431', async () => {
    const big = 'a'.repeat(LIMITS.htmlMaxLength * 10);
    const response = await service.get(`/capture?html=${big}`, { headers: { 'X-API-Key': service.apiKey } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.message).toContain('html');
  });

  it('answers an html just over the maximum (fits the request line) with VALIDATION_ERROR on html', async () => {
    const response = await service.get(`/capture?html=${'a'.repeat(LIMITS.htmlMaxLength + 1)}`, {
      headers: { 'X-API-Key': service.apiKey },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { details: Array<{ field: string }> } };
    expect(body.error.details[0]!.field).toBe('html');
  });

  it('applies the provider-key rule to header X-OpenAI-Api-Key as to openaiApiKey', async () => {
    for (const [query, headers] of [
      [`html=x&openaiApiKey=sk-test`, {}],
      [`html=x`, { 'X-OpenAI-Api-Key': 'sk-test' }],
    ] as const) {
      const response = await service.get(`/capture?${query}`, { headers: { 'X-API-Key': service.apiKey, ...headers } });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { code: string; details: Array<{ field: string; message: string }> } };
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(body.error.details.map((d) => d.field)).toEqual(['openaiPrompt']);
      expect(body.error.details[0]!.message).toContain('X-OpenAI-Api-Key');
    }
  });

  it.each([
    ['html', 'html=a&html=b'],
    ['apiKey', 'html=x&apiKey=a&apiKey=b'],
    ['format', 'html=x&format=png&format=jpeg'],
  ])('answers %s given twice with 400 naming it and saying it was given more than once', async (field, query) => {
    const response = await service.get(`/capture?${query}`, { headers: { 'X-API-Key': service.apiKey } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as {
      error: { code: string; message: string; details: Array<{ field: string; message: string; value: unknown }> };
    };
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.details.map((d) => d.field)).toEqual([field]);
    expect(body.error.message).toContain(`${field} was given more than once`);
    expect(JSON.stringify(body)).not.toContain('API key required');
    if (field === 'apiKey') expect(body.error.details[0]!.value).toBe('[REDACTED]');
  });

  it('says each thing once in the message', async () => {
    for (const query of ['url=https%3A%2F%2Fexample.com&html=x', 'format=png']) {
      const response = await service.get(`/capture?${query}`, { headers: { 'X-API-Key': service.apiKey } });
      const body = (await response.json()) as { error: { message: string; details: Array<{ message: string }> } };
      expect(response.status).toBe(400);
      for (const detail of body.error.details) expect(body.error.message.split(detail.message).length - 1, body.error.message).toBe(1);
    }
  });

  it('charged nothing for any of the rejected requests', async () => {
    const usage = await service.client.usage();
    // Only the one successful JSON capture above was charged.
    expect(usage.credits.usedThisPeriod).toBe(1);
    expect(usage.credits.remaining).toBe(999);
  });
});

import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { captureFields, signedLinkFields } from '@rendershot/contract';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../scripts/openapi-document.js';

const committed = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as Record<string, unknown>;

/** The parameter names of the spec's GET /capture tables, written out by hand. */
const SPEC_PARAMETERS = `url html apiKey format pdfPageLayout returnFile imageQuality scaleFactor device viewportWidth viewportHeight theme
  fullPage fullPageScroll fullPageScrollDuration clipSelector delay waitUntil waitForSelector removeAds removeCookieBanners
  removeSelectors blockResources blockUrls userAgent headers openaiPrompt openaiApiKey latitude longitude proxyUrl proxyUsername
  proxyPassword cacheEnabled cacheTtl requestStorageEnabled requestStorageEndpoint requestStorageAccessKeyId
  requestStorageSecretAccessKey requestStorageBucket requestStorageRegion`.split(/\s+/);

/** Parameters beyond the spec's tables that extend it in its style (issue #19: page control). */
const EXTENSION_PARAMETERS = ['hideSelectors', 'styles', 'timezone', 'locale', 'mediaType', 'reducedMotion', 'failOnHttpError', 'omitBackground',
  'scripts', 'click', 'scrollIntoView', 'pdfFormat', 'pdfLandscape', 'pdfMargin', 'pdfMarginTop', 'pdfMarginRight', 'pdfMarginBottom',
  'pdfMarginLeft', 'pdfPrintBackground', 'pdfScale', 'pdfPageRanges', 'pdfHeaderTemplate', 'pdfFooterTemplate', 'pdfPreferCssPageSize',
  // Issue #34: scrolling video.
  'videoDuration', 'videoFps', 'scrollEasing', 'scrollToSelector'];

interface Operation {
  parameters: Array<{ name: string; in: string; description?: string; schema?: { type?: string }; example?: unknown }>;
  responses: Record<string, { content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> }>;
}

const operation = (path: string, method: string) => (committed.paths as Record<string, Record<string, Operation>>)[path]![method]!;

describe('openapi.json', () => {
  it('is exactly what `npm run openapi` generates from the contract (regenerate and commit when this fails)', () => {
    expect(JSON.parse(JSON.stringify(buildOpenApiDocument()))).toEqual(committed);
  });

  it('validates as OpenAPI 3', async () => {
    await expect(SwaggerParser.validate(structuredClone(committed) as never)).resolves.toBeTruthy();
  });

  it('lists every capture parameter of the spec with a description', () => {
    const capture = (committed.paths as Record<string, { get: Operation }>)['/capture']!.get;
    const query = capture.parameters.filter((p) => p.in === 'query');
    // The spec's parameters plus a signed link's (issue 17), which GET /capture alone accepts.
    expect(query.map((p) => p.name).sort()).toEqual([...Object.keys(captureFields), ...Object.keys(signedLinkFields)].sort());
    for (const parameter of query) expect(parameter.description, parameter.name).toBeTruthy();
    expect(Object.keys(captureFields).sort()).toEqual([...SPEC_PARAMETERS, ...EXTENSION_PARAMETERS].sort());
  });

  it('declares the binary responses per format and the JSON result', () => {
    const capture = (committed.paths as Record<string, { get: Operation }>)['/capture']!.get;
    const content = capture.responses['200']!.content!;
    for (const mime of ['image/png', 'image/webp', 'image/jpeg', 'application/pdf']) {
      expect(content[mime]!.schema).toEqual({ type: 'string', format: 'binary' });
    }
    expect(content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/CaptureResult' });
    for (const status of ['400', '401', '402', '403', '429', '500']) {
      expect(capture.responses[status]!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
    }
  });

  it('has security schemes for the apiKey query parameter and the X-API-Key header', () => {
    const schemes = (committed.components as { securitySchemes: Record<string, unknown> }).securitySchemes;
    expect(schemes).toEqual({
      apiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey' },
      apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    });
  });

  it('declares headers as the URL-encoded JSON string the server reads, with an example that parses', () => {
    const headers = operation('/capture', 'get').parameters.find((p) => p.name === 'headers')!;
    expect(headers.schema).toEqual({ type: 'string', example: '{"Accept-Language":"de-DE"}' });
    expect(JSON.parse(String((headers.schema as { example: string }).example))).toEqual({ 'Accept-Language': 'de-DE' });
  });

  it('declares the response headers the server sends on each response that carries them', () => {
    for (const [path, method] of [['/capture', 'get'], ['/capture', 'post']] as const) {
      const { responses } = operation(path, method);
      expect(Object.keys(responses['200']!.headers!)).toEqual(expect.arrayContaining([
        'X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Content-Length', 'Content-Disposition',
        'Server-Timing', 'X-Cache', 'X-Storage-Url', 'X-Service-AI-Result', 'X-Service-AI-Result-Truncated',
      ]));
      for (const status of ['429', '503']) expect(Object.keys(responses[status]!.headers!)).toContain('Retry-After');
      for (const status of ['400', '402', '429', '504']) expect(Object.keys(responses[status]!.headers!)).toContain('X-RateLimit-Remaining');
      // Authentication fails before the throttle counts the request.
      expect(Object.keys(responses['401']!.headers!)).not.toContain('X-RateLimit-Remaining');
      for (const response of Object.values(responses)) expect(Object.keys(response.headers!)).toContain('X-Request-Id');
    }
    expect(Object.keys(operation('/usage', 'get').responses['200']!.headers!)).not.toContain('X-RateLimit-Limit');
  });

  it('declares every status each operation can answer', () => {
    const statuses = (path: string, method: string) => Object.keys(operation(path, method).responses).sort();
    const capture = ['200', '400', '401', '402', '403', '429', '500', '502', '503', '504'];
    expect(statuses('/capture', 'get')).toEqual(capture);
    expect(statuses('/capture', 'post')).toEqual(capture);
    expect(statuses('/usage', 'get')).toEqual(['200', '400', '401', '403', '500', '503']);
  });

  it('has no nullable without a type (OpenAPI 3.0 linters reject it)', () => {
    const offenders: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (node === null || typeof node !== 'object') return;
      const record = node as Record<string, unknown>;
      if (record.nullable === true && record.type === undefined) offenders.push(at);
      for (const [key, value] of Object.entries(record)) walk(value, `${at}/${key}`);
    };
    walk(committed, '#');
    expect(offenders).toEqual([]);
  });
});

import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { captureFields, signedLinkFields } from '@daguerre/contract';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../scripts/openapi-document.js';

const committed = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as Record<string, unknown>;

/** The parameter names GET /capture had from the first version, written out by hand. */
const SPEC_PARAMETERS = `url html apiKey format pdfPageLayout returnFile imageQuality scaleFactor device viewportWidth viewportHeight theme
  fullPage fullPageScroll fullPageScrollDuration clipSelector delay waitUntil waitForSelector removeAds removeCookieBanners
  removeSelectors blockResources blockUrls userAgent headers openaiPrompt openaiApiKey latitude longitude proxyUrl proxyUsername
  proxyPassword cacheEnabled cacheTtl requestStorageEnabled requestStorageEndpoint requestStorageAccessKeyId
  requestStorageSecretAccessKey requestStorageBucket requestStorageRegion`.split(/\s+/);

/** Parameters added since in the same style (page control: docs/page-control-and-pdf.md). */
const EXTENSION_PARAMETERS = [
  'hideSelectors',
  'styles',
  'timezone',
  'locale',
  'mediaType',
  'reducedMotion',
  'failOnHttpError',
  'failOnWaitTimeout',
  'omitBackground',
  'scripts',
  'click',
  'scrollIntoView',
  'pdfFormat',
  'pdfLandscape',
  'pdfMargin',
  'pdfMarginTop',
  'pdfMarginRight',
  'pdfMarginBottom',
  'pdfMarginLeft',
  'pdfPrintBackground',
  'pdfScale',
  'pdfPageRanges',
  'pdfHeaderTemplate',
  'pdfFooterTemplate',
  'pdfPreferCssPageSize',
  // Page insight (docs/page-insight.md).
  'metadata',
  'failOnBlank',
  'openaiSchema',
  // Scrolling video (docs/video.md).
  'videoDuration',
  'videoFps',
  'scrollEasing',
  'scrollToSelector',
];

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
    // Those parameters plus a signed link's (docs/signed-links.md), which GET /capture alone accepts.
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

  it('has security schemes for the key (query, header) and signed links, which GET /capture alone accepts', () => {
    const schemes = (committed.components as { securitySchemes: Record<string, { type: string; in: string; name: string }> })
      .securitySchemes;
    expect(Object.fromEntries(Object.entries(schemes).map(([name, s]) => [name, [s.type, s.in, s.name]]))).toEqual({
      apiKeyQuery: ['apiKey', 'query', 'apiKey'],
      apiKeyHeader: ['apiKey', 'header', 'X-API-Key'],
      signedLink: ['apiKey', 'query', 'signature'],
    });
    const security = (path: string, method: string) => (operation(path, method) as unknown as { security: unknown[] }).security;
    expect(security('/capture', 'get')).toEqual([{ apiKeyQuery: [] }, { apiKeyHeader: [] }, { signedLink: [] }]);
    for (const [path, method] of [
      ['/capture', 'post'],
      ['/usage', 'get'],
      ['/captures', 'post'],
      ['/captures/{jobId}', 'get'],
      ['/captures/{jobId}/file', 'get'],
    ] as const) {
      expect(security(path, method), `${method} ${path}`).toEqual([{ apiKeyQuery: [] }, { apiKeyHeader: [] }]);
    }
  });

  it('declares headers as the URL-encoded JSON string the server reads, with no example "Try it out" would send', () => {
    const headers = operation('/capture', 'get').parameters.find((p) => p.name === 'headers')!;
    expect(headers.schema).toEqual({ type: 'string' });
    expect(headers.description).toContain('{"Accept-Language":"de-DE"}');
  });

  it('has no parameter example or default that would change a capture when sent as a value', () => {
    const offenders: string[] = [];
    for (const [path, methods] of Object.entries(committed.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const parameter of op.parameters ?? []) {
          const schema = (parameter.schema ?? {}) as { example?: unknown; default?: unknown };
          if (parameter.example !== undefined || schema.example !== undefined)
            offenders.push(`${method} ${path} ${parameter.name}: example`);
          // Defaults that depend on the device preset or are refused with pdfPageLayout=single.
          if (
            ['viewportWidth', 'viewportHeight', 'scaleFactor', 'pdfFormat', 'pdfScale', 'pdfLandscape', 'pdfPreferCssPageSize'].includes(
              parameter.name,
            ) &&
            schema.default !== undefined
          ) {
            offenders.push(`${method} ${path} ${parameter.name}: default`);
          }
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('declares query booleans with the 1 and 0 the server also accepts', () => {
    const fullPage = operation('/capture', 'get').parameters.find((p) => p.name === 'fullPage')!;
    expect(fullPage.schema).toMatchObject({ anyOf: [{ type: 'boolean' }, { type: 'string', enum: ['0', '1'] }], default: false });
  });

  it('inlines request bodies (openapi-typescript would make every defaulted field required in a component) with a minimal example', () => {
    for (const [path, id] of [
      ['/capture', 'captureWithBody'],
      ['/captures', 'createCaptureJob'],
    ] as const) {
      const body = (
        committed.paths as Record<
          string,
          Record<string, { requestBody: { content: Record<string, { schema: { $ref?: string; required?: string[] }; example: unknown }> } }>
        >
      )[path]!.post!.requestBody.content['application/json']!;
      expect(body.schema.$ref, id).toBeUndefined();
      expect(body.schema.required ?? [], id).toEqual([]);
      expect(body.example, id).toMatchObject({ url: 'https://example.com' });
      expect(body.example, id).not.toHaveProperty('apiKey');
    }
  });

  it('gives each error status an example with its own code', () => {
    const example = (path: string, method: string, status: string) =>
      (operation(path, method).responses[status]!.content!['application/json'] as unknown as { example: { error: { code: string } } })
        .example.error.code;
    expect(example('/capture', 'get', '400')).toBe('VALIDATION_ERROR');
    expect(example('/capture', 'get', '401')).toBe('API_KEY_REQUIRED');
    expect(example('/capture', 'get', '402')).toBe('INSUFFICIENT_CREDITS');
    expect(example('/capture', 'get', '429')).toBe('RATE_LIMIT_EXCEEDED');
    expect(example('/capture', 'get', '503')).toBe('SERVICE_UNAVAILABLE');
    expect(example('/capture', 'get', '504')).toBe('CAPTURE_TIMEOUT');
    expect(example('/usage', 'get', '403')).toBe('MEMBERSHIP_INACTIVE');
    expect(example('/captures/{jobId}/file', 'get', '409')).toBe('JOB_NOT_FINISHED');
  });

  it('declares the response headers the server sends on each response that carries them', () => {
    for (const [path, method] of [
      ['/capture', 'get'],
      ['/capture', 'post'],
    ] as const) {
      const { responses } = operation(path, method);
      expect(Object.keys(responses['200']!.headers!)).toEqual(
        expect.arrayContaining([
          'X-Request-Id',
          'X-RateLimit-Limit',
          'X-RateLimit-Remaining',
          'X-RateLimit-Reset',
          'Content-Length',
          'Content-Disposition',
          'Server-Timing',
          'X-Cache',
          'X-Storage-Url',
          'X-Service-AI-Result',
          'X-Service-AI-Result-Truncated',
        ]),
      );
      for (const status of ['429', '503']) expect(Object.keys(responses[status]!.headers!)).toContain('Retry-After');
      for (const status of ['400', '402', '429', '504'])
        expect(Object.keys(responses[status]!.headers!)).toContain('X-RateLimit-Remaining');
      // Authentication fails before the throttle counts the request.
      expect(Object.keys(responses['401']!.headers!)).not.toContain('X-RateLimit-Remaining');
      for (const response of Object.values(responses)) expect(Object.keys(response.headers!)).toContain('X-Request-Id');
    }
    expect(Object.keys(operation('/usage', 'get').responses['200']!.headers!)).not.toContain('X-RateLimit-Limit');
    const job = operation('/captures', 'post').responses;
    expect(Object.keys(job['202']!.headers!)).toEqual(
      expect.arrayContaining(['Location', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
    );
    for (const status of ['400', '402', '429']) expect(Object.keys(job[status]!.headers!), status).toContain('X-RateLimit-Remaining');
    expect(Object.keys(operation('/captures/{jobId}/file', 'get').responses['200']!.headers!)).toEqual(
      expect.arrayContaining(['Content-Disposition', 'X-Capture-Request-Id', 'Content-Length']),
    );
    for (const [path, methods] of Object.entries(committed.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(methods)) {
        if (op.responses['503']) expect(Object.keys(op.responses['503'].headers!), `${method} ${path}`).toContain('Retry-After');
      }
    }
  });

  it('declares every status each operation can answer', () => {
    const statuses = (path: string, method: string) => Object.keys(operation(path, method).responses).sort();
    const capture = ['200', '400', '401', '402', '403', '422', '429', '500', '502', '503', '504'];
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

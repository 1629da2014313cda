import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { captureFields } from '@rendershot/contract';
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
const EXTENSION_PARAMETERS = ['hideSelectors', 'styles', 'timezone', 'locale', 'mediaType', 'reducedMotion', 'failOnHttpError', 'omitBackground'];

interface Operation {
  parameters: Array<{ name: string; in: string; description?: string }>;
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

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
    expect(query.map((p) => p.name).sort()).toEqual(Object.keys(captureFields).sort());
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
});

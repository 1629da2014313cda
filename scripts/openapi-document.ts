import type { AppRoute } from '@ts-rest/core';
import { generateOpenApi } from '@ts-rest/open-api';
import { contract, FORMATS, MIME_TYPES } from '@rendershot/contract';
import type { OpenAPIObject, OperationObject, ParameterObject } from 'openapi3-ts';
import { readFileSync } from 'node:fs';

const packageVersion = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const BINARY = { schema: { type: 'string', format: 'binary' } };

/** Adds what ts-rest cannot express: the binary 200s, comma-separated lists, and key security. */
function completeOperation(operation: OperationObject, route: AppRoute): OperationObject {
  operation.tags = [route.path.slice(1).split('/')[0]!];
  const ok = operation.responses?.['200'];
  if (ok && ok.content?.['application/json']?.schema?.$ref === '#/components/schemas/CaptureResult') {
    ok.description = 'The file (default, Content-Type per format) or, with returnFile=false, the JSON CaptureResult.';
    ok.content = {
      ...Object.fromEntries(FORMATS.map((format) => [MIME_TYPES[format], BINARY])),
      'application/json': ok.content['application/json'],
    };
    ok.headers = {
      'Content-Disposition': { description: 'inline; filename="<fileName>"', schema: { type: 'string' } },
      'X-Service-AI-Result': { description: 'Analysis text, header-safe, when openaiPrompt is given', schema: { type: 'string' } },
      'X-Service-AI-Result-Truncated': { description: 'true when X-Service-AI-Result was cut', schema: { type: 'string', enum: ['true', 'false'] } },
      'X-Cache': { description: 'HIT when served from the response cache, MISS otherwise (cacheEnabled=true)', schema: { type: 'string' } },
    };
  }
  if (ok && route.method === 'GET' && route.path === '/captures/:jobId/file') {
    ok.description = 'The file of the succeeded job, with the headers of a binary /capture.';
    ok.content = Object.fromEntries(FORMATS.map((format) => [MIME_TYPES[format], BINARY]));
    ok.headers = { 'Content-Disposition': { description: 'inline; filename="<fileName>"', schema: { type: 'string' } } };
  }
  if (route.path === '/captures') operation.tags = ['captures'];
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (status === '200' || !response) continue;
    response.headers = {
      'X-RateLimit-Limit': { description: 'Capture requests allowed per window', schema: { type: 'integer' } },
      'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
      'X-RateLimit-Reset': { description: 'Unix epoch seconds when the window resets', schema: { type: 'integer' } },
      ...(status === '429' || status === '503' ? { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } : {}),
    };
  }
  for (const parameter of (operation.parameters ?? []) as ParameterObject[]) {
    // Lists travel as one comma-separated value: blockResources=image,font
    if (parameter.in === 'query' && parameter.schema && 'type' in parameter.schema && parameter.schema.type === 'array') {
      parameter.style = 'form';
      parameter.explode = false;
    }
  }
  operation.security = [{ apiKeyQuery: [] }, { apiKeyHeader: [] }];
  return operation;
}

export function buildOpenApiDocument(): OpenAPIObject {
  const document = generateOpenApi(
    contract,
    {
      info: {
        title: 'Rendershot capture API',
        version: packageVersion,
        description: 'Screenshot and PDF capture of web pages or inline HTML, with credits and a rate limit per organization.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
    { setOperationId: true, operationMapper: completeOperation },
  );
  return document;
}

import type { AppRoute } from '@ts-rest/core';
import { generateOpenApi } from '@ts-rest/open-api';
import { contract, FORMATS, MIME_TYPES } from '@rendershot/contract';
import type { OpenAPIObject, OperationObject, ParameterObject, SchemaObject } from 'openapi3-ts';
import { readFileSync } from 'node:fs';
import { responseHeadersFor } from './openapi-response-headers.js';

const rootPackage = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string; license: string };

const BINARY = { schema: { type: 'string', format: 'binary' } };

/**
 * Query parameters whose wire form differs from the parsed value the contract describes. `headers`
 * travels as one URL-encoded JSON string: declared as an object, Swagger UI and generated clients
 * send it as separate keys (`additionalProp1=…`, `headers[X-A]=…`), which the server refuses.
 */
const QUERY_WIRE_SCHEMAS: Record<string, SchemaObject> = {
  headers: { type: 'string', example: '{"Accept-Language":"de-DE"}' },
};

/**
 * `z.unknown()` becomes `{ nullable: true }` without a type, which OpenAPI 3.0 linters reject. A
 * schema without a type already admits any value, so the flag is dropped there.
 */
function dropUntypedNullable(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) dropUntypedNullable(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  if (record.nullable === true && record.type === undefined && record.$ref === undefined) delete record.nullable;
  for (const value of Object.values(record)) dropUntypedNullable(value);
}

/** Adds what ts-rest cannot express: the binary 200s, response headers, wire forms of lists and headers, key security. */
function completeOperation(operation: OperationObject, route: AppRoute): OperationObject {
  operation.tags = [route.path.slice(1).split('/')[0]!];
  const ok = operation.responses?.['200'];
  if (ok && ok.content?.['application/json']?.schema?.$ref === '#/components/schemas/CaptureResult') {
    ok.description = 'The file (default, Content-Type per format) or, with returnFile=false, the JSON CaptureResult.';
    ok.content = {
      ...Object.fromEntries(FORMATS.map((format) => [MIME_TYPES[format], BINARY])),
      'application/json': ok.content['application/json'],
    };
  }
  if (ok && route.method === 'GET' && route.path === '/captures/:jobId/file') {
    ok.description = 'The file of the succeeded job, with the headers of a binary /capture.';
    ok.content = Object.fromEntries(FORMATS.map((format) => [MIME_TYPES[format], BINARY]));
    ok.headers = { 'Content-Disposition': { description: 'inline; filename="<fileName>"', schema: { type: 'string' } } };
  }
  if (route.path === '/captures') operation.tags = ['captures'];
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (!response || !operation.operationId) continue;
    const headers = responseHeadersFor(operation.operationId, status);
    if (Object.keys(headers).length > 0) response.headers = headers;
  }
  for (const parameter of (operation.parameters ?? []) as ParameterObject[]) {
    if (parameter.in !== 'query') continue;
    const wire = QUERY_WIRE_SCHEMAS[parameter.name];
    if (wire) {
      parameter.schema = wire;
      continue;
    }
    // Lists travel as one comma-separated value: blockResources=image,font
    if (parameter.schema && 'type' in parameter.schema && parameter.schema.type === 'array') {
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
        version: rootPackage.version,
        description: 'Screenshot and PDF capture of web pages or inline HTML, with credits and a rate limit per organization.',
        license: { name: rootPackage.license, url: 'https://opensource.org/licenses/MIT' },
        contact: { name: 'Rendershot maintainers' },
      },
      servers: [{ url: '/' }],
      tags: [
        { name: 'capture', description: 'Screenshots and PDFs of a page or inline HTML' },
        { name: 'usage', description: 'Credit balance and rate limit of the organization' },
      ],
      components: {
        securitySchemes: {
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
    { setOperationId: true, operationMapper: completeOperation },
  );
  dropUntypedNullable(document);
  return document;
}

import type { AppRoute } from '@ts-rest/core';
import { generateOpenApi } from '@ts-rest/open-api';
import {
  contract,
  errorExample,
  FORMATS,
  MIME_TYPES,
  QUERY_BOOLEAN_WORDS,
  REQUEST_BODY_EXAMPLES,
  SECURITY_SCHEMES,
  securityOf,
} from '@daguerre/contract';
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
  // No example: "Try it out" would send it as a real header. The description gives one.
  headers: { type: 'string' },
};

/**
 * A boolean in the query string: true/false, and 1/0 too (contract/src/params.ts). Declared as
 * both so validating proxies and generated clients accept what the server accepts.
 */
function queryBooleanSchema(schema: SchemaObject): SchemaObject {
  const words = QUERY_BOOLEAN_WORDS.filter((word) => word !== 'true' && word !== 'false');
  return {
    anyOf: [{ type: 'boolean' }, { type: 'string', enum: words }],
    ...(schema.default !== undefined ? { default: schema.default } : {}),
    ...(schema.description !== undefined ? { description: schema.description } : {}),
  };
}

/**
 * Request bodies are written inline, not as $ref components: openapi-typescript (defaultNonNullable,
 * on by default) makes every field with a `default` required outside request bodies, so a
 * referenced CaptureRequest would demand all 30 defaulted fields from a caller.
 */
function inlineRequestBodies(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, SchemaObject>;
  const inlined = new Set<string>();
  for (const path of Object.values(document.paths ?? {}) as Array<Record<string, OperationObject>>) {
    for (const operation of Object.values(path)) {
      const media = (operation.requestBody as { content?: Record<string, { schema?: { $ref?: string } }> } | undefined)?.content?.[
        'application/json'
      ];
      const ref = media?.schema?.$ref;
      if (!media || !ref?.startsWith('#/components/schemas/')) continue;
      const name = ref.slice('#/components/schemas/'.length);
      media.schema = structuredClone(schemas[name]!) as never;
      inlined.add(name);
    }
  }
  for (const name of inlined) {
    if (!JSON.stringify(document).includes(`"#/components/schemas/${name}"`)) delete schemas[name];
  }
}

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

/**
 * A titled nullable schema (MonitorRunOrNull) comes out as `{ allOf: [{ $ref }] }`, which linters
 * flag as a composition of one: the reference is used directly.
 */
function collapseSingleAllOf(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) collapseSingleAllOf(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    const inner = value as { allOf?: unknown[] } | null;
    if (inner && typeof inner === 'object' && Array.isArray(inner.allOf) && inner.allOf.length === 1 && Object.keys(inner).length === 1)
      record[key] = inner.allOf[0];
    collapseSingleAllOf(record[key]);
  }
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
  }
  if (route.path === '/captures') operation.tags = ['captures'];
  // POST /diff and its images belong with the monitors: the same comparison, once.
  if (route.path === '/diff' || route.path.startsWith('/diffs/')) operation.tags = ['monitors'];
  const operationId = operation.operationId!;
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (!response) continue;
    const headers = responseHeadersFor(operationId, status);
    if (Object.keys(headers).length > 0) response.headers = headers;
    // One example per status (401 API_KEY_REQUIRED, 402 INSUFFICIENT_CREDITS, …), not the schema's first enum value.
    const example = errorExample(operationId, status);
    const json = response.content?.['application/json'];
    if (example && json) json.example = example;
  }
  const bodyExample = REQUEST_BODY_EXAMPLES[operationId];
  const body = (operation.requestBody as { content?: Record<string, { example?: unknown }> } | undefined)?.content?.['application/json'];
  // Swagger UI pre-fills this instead of a sample of every field ("apiKey": "string" overrode the authorized key).
  if (bodyExample && body) body.example = bodyExample;
  for (const parameter of (operation.parameters ?? []) as ParameterObject[]) {
    if (parameter.in !== 'query') continue;
    const wire = QUERY_WIRE_SCHEMAS[parameter.name];
    if (wire) {
      parameter.schema = wire;
      continue;
    }
    if (parameter.schema && 'type' in parameter.schema && parameter.schema.type === 'boolean') {
      parameter.schema = queryBooleanSchema(parameter.schema);
      continue;
    }
    // Lists travel as one comma-separated value: blockResources=image,font
    if (parameter.schema && 'type' in parameter.schema && parameter.schema.type === 'array') {
      parameter.style = 'form';
      parameter.explode = false;
    }
  }
  operation.security = securityOf(operationId);
  return operation;
}

export function buildOpenApiDocument(): OpenAPIObject {
  const document = generateOpenApi(
    contract,
    {
      info: {
        title: 'Daguerre capture API',
        version: rootPackage.version,
        description: 'Screenshot and PDF capture of web pages or inline HTML, with credits and a rate limit per organization.',
        license: { name: rootPackage.license, url: 'https://opensource.org/licenses/MIT' },
        contact: { name: 'Daguerre maintainers' },
      },
      servers: [{ url: '/' }],
      tags: [
        { name: 'capture', description: 'Screenshots and PDFs of a page or inline HTML' },
        { name: 'usage', description: 'Credit balance and rate limit of the organization' },
        { name: 'captures', description: 'Async captures: queue a capture, poll it, download its file, get a signed webhook' },
        { name: 'webhooks', description: 'Webhook events of async captures and batches: each attempt, and sending one again' },
        {
          name: 'monitors',
          description: 'Monitors: a page captured on a schedule and compared with its baseline; POST /diff, the same comparison once',
        },
      ],
      components: { securitySchemes: structuredClone(SECURITY_SCHEMES) as never },
    },
    { setOperationId: true, operationMapper: completeOperation },
  );
  dropUntypedNullable(document);
  collapseSingleAllOf(document);
  inlineRequestBodies(document);
  return document;
}

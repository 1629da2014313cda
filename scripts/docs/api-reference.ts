import type { OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, ResponseObject, SchemaObject } from 'openapi3-ts';
import { ERROR_CATALOG } from '@daguerre/contract';
import { isQueryBoolean } from './client-options.js';
import { DOC_EXAMPLES } from './doc-examples.js';

/**
 * The API reference page, written from the OpenAPI document the contract generates: every
 * parameter with its type, default, range and example, every response with its headers, every
 * error code. Nothing here is typed by hand, so the page cannot drift from the service.
 */

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head'] as const;

/** Table cells hold no pipes or line breaks. */
function cell(text: unknown): string {
  if (text === undefined || text === null || text === '') return '';
  return String(text).replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

const code = (value: unknown) => (value === undefined ? '' : `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``);

function resolve<T>(document: OpenAPIObject, node: T | ReferenceObject): T {
  if (node && typeof node === 'object' && '$ref' in node) {
    const path = (node as ReferenceObject).$ref.replace(/^#\//, '').split('/');
    let target: unknown = document;
    for (const part of path) target = (target as Record<string, unknown>)[part];
    return target as T;
  }
  return node as T;
}

function typeOf(document: OpenAPIObject, schema: SchemaObject | ReferenceObject | undefined): string {
  if (!schema) return '';
  if ('$ref' in schema) return schema.$ref.split('/').pop()!;
  if (isQueryBoolean(schema)) return 'boolean (`true`/`false`, or `1`/`0`)';
  if (schema.type === 'array') return `list of ${typeOf(document, schema.items as SchemaObject)}`;
  if (schema.anyOf || schema.oneOf) return ((schema.anyOf ?? schema.oneOf) as SchemaObject[]).map((s) => typeOf(document, s)).join(' or ');
  return [schema.type ?? 'any', schema.format ? `(${schema.format})` : ''].filter(Boolean).join(' ');
}

/** An example for one parameter or field: the contract's, an "e.g." of its description, its default, its first allowed value, or the docs' own. */
function exampleOf(
  name: string,
  schema: SchemaObject | ReferenceObject | undefined,
  description: string | undefined,
  explicit: unknown,
): string {
  if (explicit !== undefined) return code(explicit);
  const said = /\be\.g\. ([^\s,;)]+)/.exec(description ?? '')?.[1];
  if (said) return code(said.replace(/[.]$/, ''));
  if (name in DOC_EXAMPLES) return code(DOC_EXAMPLES[name]);
  if (!schema || '$ref' in schema) return '';
  if (schema.default !== undefined) return code(schema.default);
  if (schema.enum?.length) return code(schema.enum[0]);
  if (isQueryBoolean(schema) || schema.type === 'boolean') return code(true);
  if (schema.type === 'array' && schema.items && !('$ref' in schema.items) && schema.items.enum?.length)
    return code(schema.items.enum.slice(0, 2).join(','));
  if (schema.minimum !== undefined) return code(schema.minimum);
  return '';
}

/** Range, length, enum and pattern rules of one schema, in words. */
function rulesOf(schema: SchemaObject | ReferenceObject | undefined): string {
  if (!schema || '$ref' in schema) return '';
  const rules: string[] = [];
  if (schema.enum) rules.push(`one of ${schema.enum.map((v) => code(v)).join(', ')}`);
  if (schema.minimum !== undefined && schema.maximum !== undefined) rules.push(`${schema.minimum} to ${schema.maximum}`);
  else if (schema.minimum !== undefined) rules.push(`at least ${schema.minimum}`);
  else if (schema.maximum !== undefined) rules.push(`at most ${schema.maximum}`);
  if (schema.maxLength !== undefined) rules.push(`at most ${schema.maxLength} characters`);
  if (schema.maxItems !== undefined) rules.push(`at most ${schema.maxItems} items`);
  if (schema.pattern !== undefined) rules.push(`matches ${code(schema.pattern)}`);
  if (schema.type === 'array' && schema.items && !('$ref' in schema.items)) {
    const items = rulesOf(schema.items);
    if (items) rules.push(`each ${items}`);
  }
  return rules.join('; ');
}

function parameterTable(document: OpenAPIObject, parameters: ParameterObject[]): string[] {
  const lines = ['| Parameter | In | Type | Default | Rules | Example | Description |', '|---|---|---|---|---|---|---|'];
  for (const parameter of parameters) {
    const schema = parameter.schema as SchemaObject | undefined;
    const description = parameter.description ?? (schema && !('$ref' in schema) ? schema.description : undefined);
    lines.push(
      `| ${code(parameter.name)}${parameter.required ? ' (required)' : ''} | ${parameter.in} | ${cell(typeOf(document, schema))} | ${cell(code(schema?.default))} | ${cell(rulesOf(schema))} | ${cell(exampleOf(parameter.name, schema, description, parameter.example ?? (schema && !('$ref' in schema) ? schema.example : undefined)))} | ${cell(description)} |`,
    );
  }
  return lines;
}

function bodyTable(document: OpenAPIObject, schemaRef: SchemaObject | ReferenceObject): string[] {
  const schema = resolve<SchemaObject>(document, schemaRef);
  const required = new Set(schema.required ?? []);
  const lines = ['| Field | Type | Default | Rules | Example | Description |', '|---|---|---|---|---|---|'];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const field = property as SchemaObject;
    // A field that is a component (`defaults`: BulkCaptureItem) is described by the component.
    const description = field.description ?? resolve<SchemaObject>(document, property).description;
    lines.push(
      `| ${code(name)}${required.has(name) ? ' (required)' : ''} | ${cell(typeOf(document, field))} | ${cell(code(field.default))} | ${cell(rulesOf(field))} | ${cell(exampleOf(name, field, description, field.example))} | ${cell(description)} |`,
    );
  }
  return lines;
}

function responseSection(document: OpenAPIObject, status: string, responseRef: ResponseObject | ReferenceObject): string[] {
  const response = resolve<ResponseObject>(document, responseRef);
  const types = Object.keys(response.content ?? {});
  const lines = [`- **${status}** ${cell(response.description)}${types.length ? ` (${types.map((t) => code(t)).join(', ')})` : ''}`];
  for (const [name, headerRef] of Object.entries(response.headers ?? {})) {
    const header = resolve<{ description?: string; schema?: SchemaObject }>(document, headerRef as never);
    lines.push(`  - header ${code(name)}: ${cell(header.description)}`);
  }
  return lines;
}

function securityText(document: OpenAPIObject, operation: OperationObject): string {
  const security = operation.security ?? document.security;
  if (!security || security.length === 0) return 'none';
  const schemes = (document.components?.securitySchemes ?? {}) as Record<
    string,
    { type: string; in?: string; name?: string; description?: string }
  >;
  return security
    .map((requirement) =>
      Object.keys(requirement)
        .map((name) => {
          const scheme = schemes[name];
          return scheme?.type === 'apiKey' ? `${scheme.in} ${code(scheme.name)}` : (scheme?.description ?? name);
        })
        .join(' and '),
    )
    .join(', or ');
}

export function renderApiReference(document: OpenAPIObject): string {
  const out: string[] = [
    '<!-- Generated by `npm run docs` from the contract (openapi.json). Do not edit by hand: change contract/ and regenerate. -->',
    `# API reference (version ${document.info.version})`,
    '',
    'Every operation of the service with every parameter, its type, default, range and an example, every',
    'response with the headers it carries, and every error code. The same facts drive `openapi.json`, Swagger UI at',
    '`/docs` and the typed client. Parameters travel in the query string (URL-encoded) unless the table says',
    'otherwise; booleans are `true` or `false`.',
    '',
    '## Operations',
    '',
  ];
  const operations: Array<{ method: string; path: string; operation: OperationObject }> = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, OperationObject | undefined>)[method];
      if (operation) operations.push({ method, path, operation });
    }
  }
  for (const { method, path, operation } of operations)
    out.push(`- [${method.toUpperCase()} ${path}](#${anchor(method, path)}): ${cell(operation.summary)}`);
  for (const { method, path, operation } of operations) {
    out.push('', `## ${method.toUpperCase()} ${path}`, '', cell(operation.summary) + '.', '');
    if (operation.description && operation.description !== operation.summary) out.push(operation.description, '');
    out.push(`Authentication: ${securityText(document, operation)}.`, '');
    const parameters = (operation.parameters ?? []).map((p) => resolve<ParameterObject>(document, p));
    if (parameters.length > 0) out.push('### Parameters', '', ...parameterTable(document, parameters), '');
    const body = operation.requestBody
      ? resolve<{ content: Record<string, { schema: SchemaObject | ReferenceObject }> }>(document, operation.requestBody as never)
      : undefined;
    const json = body?.content['application/json'];
    if (json) out.push('### JSON body', '', ...bodyTable(document, json.schema), '');
    out.push('### Responses', '');
    for (const [status, response] of Object.entries(operation.responses ?? {}))
      out.push(...responseSection(document, status, response as ResponseObject));
  }
  out.push(
    '',
    '## Error codes',
    '',
    'Every error answers `{ "success": false, "error": { "code", "message", "details"? } }`; for validation errors',
    '`details` lists each rejected field with its message and value.',
    '',
  );
  out.push('| Code | Status | When |', '|---|---|---|');
  for (const [name, entry] of Object.entries(ERROR_CATALOG)) out.push(`| ${code(name)} | ${entry.status} | ${cell(entry.when)} |`);
  out.push('');
  return out.join('\n');
}

/** GitHub's heading anchors: lowercase, spaces to dashes, punctuation dropped. */
function anchor(method: string, path: string): string {
  return `${method} ${path}`
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
}

import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv } from 'ajv';
import { BulkCaptureBodySchema, REQUEST_BODY_EXAMPLES, type BulkCaptureInput } from '@daguerre/contract';
import { describe, expect, it } from 'vitest';
import type { BulkCaptureRequest } from '../../client/src/index.js';

const committed = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as Record<string, unknown>;

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  required?: string[];
  default?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
}

/** The POST /captures/bulk body with every $ref resolved, and its example. */
async function bulkBody(): Promise<{ schema: JsonSchema; example: unknown }> {
  const document = (await SwaggerParser.dereference(structuredClone(committed) as never)) as unknown as {
    paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: JsonSchema; example: unknown }> } }>>;
  };
  return document.paths['/captures/bulk']!.post!.requestBody.content['application/json']!;
}

/** Every object in a schema that admits fields nobody declared, or values nobody typed. */
function freeFormObjects(schema: JsonSchema, at: string): string[] {
  const found: string[] = [];
  if (schema.type === 'object' || schema.properties || schema.additionalProperties !== undefined) {
    const extra = schema.additionalProperties;
    const typedMap = typeof extra === 'object' && (extra.type !== undefined || extra.anyOf !== undefined);
    if (!(schema.properties && extra === false) && !typedMap) found.push(at);
  }
  for (const [name, property] of Object.entries(schema.properties ?? {})) found.push(...freeFormObjects(property, `${at}.${name}`));
  if (typeof schema.additionalProperties === 'object') found.push(...freeFormObjects(schema.additionalProperties, `${at}{}`));
  if (schema.items) found.push(...freeFormObjects(schema.items, `${at}[]`));
  for (const part of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) found.push(...freeFormObjects(part, at));
  return found;
}

const validator = async () => new Ajv({ strict: false, allErrors: true }).compile((await bulkBody()).schema);

describe('POST /captures/bulk in openapi.json: typed as POST /captures is', () => {
  it('declares defaults and each item with the fields of POST /captures, and no free-form object anywhere in the body', async () => {
    const { schema } = await bulkBody();
    expect(freeFormObjects(schema, 'body')).toEqual([]);
    const asyncRequest = (await SwaggerParser.dereference(structuredClone(committed) as never)) as unknown as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: JsonSchema }> } }>>;
    };
    const jobFields = Object.keys(asyncRequest.paths['/captures']!.post!.requestBody.content['application/json']!.schema.properties!);
    for (const shape of [schema.properties!.defaults!, schema.properties!.requests!.items!]) {
      expect(Object.keys(shape.properties!).sort()).toEqual(jobFields.sort());
      expect(shape.additionalProperties).toBe(false);
      // An item or defaults gives url or html, not both: nothing is required of either alone.
      expect(shape.required ?? []).toEqual([]);
      // An absent field takes the defaults' value first: no field may claim the service's default.
      expect(
        Object.entries(shape.properties!)
          .filter(([, field]) => field.default !== undefined)
          .map(([name]) => name),
      ).toEqual([]);
    }
    expect(schema.properties!.defaults!.properties!.format).toMatchObject({ type: 'string', enum: expect.arrayContaining(['png', 'pdf']) });
    expect(schema.properties!.defaults!.properties!.viewportWidth).toMatchObject({ type: 'number', minimum: 100, maximum: 7680 });
  });

  it('names the item component once, for defaults and requests alike', () => {
    const path = (
      committed.paths as Record<
        string,
        {
          post: {
            requestBody: {
              content: Record<
                string,
                { schema: JsonSchema & { properties: Record<string, { $ref?: string; items?: { $ref?: string } }> } }
              >;
            };
          };
        }
      >
    )['/captures/bulk']!;
    const properties = path.post.requestBody.content['application/json']!.schema.properties;
    expect(properties.defaults!.$ref).toBe('#/components/schemas/BulkCaptureItem');
    expect(properties.requests!.items!.$ref).toBe('#/components/schemas/BulkCaptureItem');
  });

  it('has a minimal example (what Swagger UI pre-fills) that the OpenAPI schema and the contract both accept', async () => {
    const { example } = await bulkBody();
    expect(example).toEqual(REQUEST_BODY_EXAMPLES.createCaptureBatch);
    const validate = await validator();
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    const parsed = BulkCaptureBodySchema.safeParse(example);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(parsed.data!.items).toHaveLength(2);
  });

  it('refuses a misspelt field, a word for a number and an unknown format, in an item and in defaults', async () => {
    const validate = await validator();
    for (const body of [
      { requests: [{ ulr: 'https://example.com' }] },
      { requests: [{ html: 'x', viewportWidth: 'wide' }] },
      { defaults: { format: 'bmp' }, requests: [{ html: 'x' }] },
      { defaults: { viewportWidth: 99_999 }, requests: [{ html: 'x' }] },
    ]) {
      expect(validate(body), JSON.stringify(body)).toBe(false);
      expect(BulkCaptureBodySchema.safeParse(body).success, JSON.stringify(body)).toBe(false);
    }
  });
});

describe('the bulk body in the contract', () => {
  const fields = (body: unknown) => BulkCaptureBodySchema.safeParse(body).error?.issues.map((issue) => String(issue.path[0])) ?? [];

  it('names a bad item field by its index, and a bad field of defaults that every item overrides by defaults', () => {
    expect(fields({ defaults: { viewportWidth: 'wide' }, requests: [{ html: 'a' }, { html: 'b' }] })).toEqual([
      'requests[0].viewportWidth',
      'requests[1].viewportWidth',
    ]);
    expect(fields({ defaults: { viewportWidth: 'wide' }, requests: [{ html: 'a', viewportWidth: 300 }] })).toEqual([
      'defaults.viewportWidth',
    ]);
    expect(fields({ requests: [{ html: 'a' }, { html: 'b', ulr: 'https://example.com' }] })).toEqual(['requests[1].ulr']);
    expect(BulkCaptureBodySchema.safeParse({ requests: [{ html: 'a' }], extra: 1 }).error?.issues).toMatchObject([
      { code: 'unrecognized_keys', keys: ['extra'] },
    ]);
    expect(fields({ requests: 'a' })).toEqual(['requests']);
  });

  it('parses every item as POST /captures does: query-style strings, lists and the pdf overrides, the defaults laid under', () => {
    const parsed = BulkCaptureBodySchema.parse({
      defaults: { format: 'pdf', blockResources: 'image,font', fullPage: 'false' },
      requests: [
        { html: 'a', viewportWidth: '300' },
        { html: 'b', format: 'png', blockResources: ['script'] },
      ],
    });
    expect(
      parsed.items.map((item) => [
        item.format,
        item.viewportWidth,
        item.blockResources,
        item.fullPage,
        item.returnFile,
        item.requestStorageRegion,
      ]),
    ).toEqual([
      ['pdf', 300, ['image', 'font'], true, true, 'us-east-1'],
      ['png', undefined, ['script'], false, true, 'us-east-1'],
    ]);
  });

  it('types defaults and items for callers of the contract and of the SDK', () => {
    // @ts-expect-error a misspelt field
    const misspelt: BulkCaptureInput = { requests: [{ ulr: 'https://example.com' }] };
    // @ts-expect-error format is one of the formats
    const format: BulkCaptureInput = { defaults: { format: 'bmp' }, requests: [{ html: 'x' }] };
    // @ts-expect-error a misspelt field
    const sdkMisspelt: BulkCaptureRequest = { requests: [{ ulr: 'https://example.com' }] };
    // @ts-expect-error viewportWidth is a number
    const sdkWidth: BulkCaptureRequest = { requests: [{ html: 'x', viewportWidth: 'wide' }] };
    // @ts-expect-error format is one of the formats
    const sdkFormat: BulkCaptureRequest = { defaults: { format: 'bmp' }, requests: [{ html: 'x' }] };
    expect([misspelt, format, sdkMisspelt, sdkWidth, sdkFormat]).toHaveLength(5);
  });
});

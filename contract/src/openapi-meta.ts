import type { ZodTypeAny } from 'zod';

/**
 * Attaches OpenAPI metadata the way @anatine/zod-openapi (used by @ts-rest/open-api) reads it.
 * Same effect as its `extendApi`, without making the contract depend on the generator.
 */
export function withOpenApi<T extends ZodTypeAny>(schema: T, meta: Record<string, unknown>): T {
  const target = schema as T & { metaOpenApi?: Record<string, unknown> };
  target.metaOpenApi = { ...(target.metaOpenApi ?? {}), ...meta };
  return schema;
}

import type { captureFields } from '@daguerre/contract';
import type { z } from 'zod';

/**
 * Options of `capture()` / `captureJson()`. Derived from the contract's fields, but typed by their
 * parsed values: the contract's `CaptureInput` types most fields as `unknown` (they also accept
 * query strings), which would let `fullPage: 'yes'` compile. Every value here is also a valid
 * accepted by the server. `apiKey` and `returnFile` are left out because the client sets them. This
 * is exactly the type `capture()` and `captureJson()` take.
 */
export type CaptureInput = Omit<Partial<z.output<z.ZodObject<typeof captureFields>>>, 'apiKey' | 'returnFile'>;
/** The same type under its earlier name. */
export type CaptureRequest = CaptureInput;

/** Above this many characters of `html`, the request goes as POST with a JSON body (URL length limits). */
export const HTML_QUERY_MAX_LENGTH = 4_000;

/**
 * Whether the options must travel as a JSON body: large `html`, or a list entry containing a comma
 * (a selector such as `:is(a,b)`), which the query form cannot express since it joins lists by commas.
 */
export function needsJsonBody(options: CaptureRequest): boolean {
  if (options.html !== undefined && options.html.length > HTML_QUERY_MAX_LENGTH) return true;
  const lists: (readonly string[] | undefined)[] = [options.removeSelectors, options.hideSelectors, options.blockUrls];
  return lists.some((list) => list?.some((entry) => entry.includes(',')) ?? false);
}

/**
 * Splits the provider key off the options: the header `X-OpenAI-Api-Key` is preferred to the
 * query (docs/caching-storage-ai.md), so the key stays out of URLs and access logs.
 */
function splitProviderKey(options: CaptureRequest, returnFile: boolean) {
  const { openaiApiKey, ...rest } = options;
  const fields: Record<string, unknown> = { ...rest, returnFile };
  const headers: Record<string, string> = openaiApiKey === undefined ? {} : { 'x-openai-api-key': openaiApiKey };
  return { fields, headers };
}

function toQueryValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // Lists are comma-separated in the query form (spec: removeSelectors, blockResources, blockUrls).
  if (Array.isArray(value)) return value.map((entry) => String(entry)).join(',');
  // `headers` is a JSON object, URL-encoded (spec, "Custom request").
  return JSON.stringify(value);
}

export interface EncodedCaptureRequest {
  query: URLSearchParams;
  headers: Record<string, string>;
}

export function toCaptureQuery(options: CaptureRequest, returnFile: boolean): EncodedCaptureRequest {
  const { fields, headers } = splitProviderKey(options, returnFile);
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    const encoded = toQueryValue(value);
    if (encoded !== undefined) query.set(name, encoded);
  }
  return { query, headers };
}

export interface JsonCaptureRequest {
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/** The POST form keeps native JSON values: booleans, numbers, arrays and the headers object. */
export function toCaptureBody(options: CaptureRequest, returnFile: boolean): JsonCaptureRequest {
  const { fields, headers } = splitProviderKey(options, returnFile);
  const body = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  return { body, headers };
}

import { z } from 'zod';
import { withOpenApi } from './openapi-meta.js';

/**
 * Builders for query parameters. Query values arrive as strings while the POST form sends JSON
 * values, so each builder accepts both. Every message names the field and its valid values.
 * `z.coerce.boolean()` is never used: it turns "false" into true.
 */

const BOOLEAN_WORDS: Record<string, boolean> = { true: true, false: false, '1': true, '0': false };

function toBoolean(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return BOOLEAN_WORDS[value.trim().toLowerCase()] ?? value;
}

function toNumber(value: unknown): unknown {
  if (typeof value !== 'string' || value.trim() === '') return value;
  return Number(value);
}

export function booleanParam(field: string, defaultValue: boolean, description: string) {
  const message = `${field} must be true or false`;
  return z
    .preprocess(toBoolean, z.boolean({ errorMap: () => ({ message }) }))
    .default(defaultValue)
    .describe(`${description} Default: ${defaultValue}.`);
}

/**
 * A boolean whose absence matters (a rule refuses it where it cannot apply), so the parsed value
 * stays undefined when absent; the documented default is applied by the code that uses it.
 */
export function optionalBooleanParam(field: string, documentedDefault: boolean, description: string) {
  const message = `${field} must be true or false`;
  const schema = z
    .preprocess(toBoolean, z.boolean({ errorMap: () => ({ message }) }))
    .optional()
    .describe(`${description} Default: ${documentedDefault}.`);
  return withOpenApi(schema, { default: documentedDefault });
}

interface NumberRange {
  min: number;
  max: number;
  unit?: string;
}

function numberSchema(field: string, { min, max, unit }: NumberRange) {
  const message = `${field} must be a number from ${min} to ${max}${unit ? ` (${unit})` : ''}`;
  return z.preprocess(
    toNumber,
    z.number({ errorMap: () => ({ message }) }).finite(message).min(min, message).max(max, message),
  );
}

/** A number with a default the server applies. */
export function numberParam(field: string, range: NumberRange, defaultValue: number, description: string) {
  return numberSchema(field, range).default(defaultValue).describe(`${description} Default: ${defaultValue}.`);
}

/**
 * A number whose default depends on other parameters (viewport and scale come from the device
 * preset), so the parsed value stays undefined when absent; the documented default is metadata only.
 */
export function optionalNumberParam(field: string, range: NumberRange, description: string, documentedDefault?: number) {
  const schema = numberSchema(field, range)
    .optional()
    .describe(documentedDefault === undefined ? description : `${description} Default: ${documentedDefault}.`);
  return documentedDefault === undefined ? schema : withOpenApi(schema, { default: documentedDefault });
}

export function enumParam<T extends string>(field: string, values: readonly [T, ...T[]], defaultValue: T, description: string) {
  const message = `${field} must be one of: ${values.join(', ')}`;
  return z
    .enum(values as [T, ...T[]], { errorMap: () => ({ message }) })
    .default(defaultValue)
    .describe(`${description} Default: ${defaultValue}.`);
}

export function stringParam(field: string, maxLength: number, description: string) {
  const tooLong = `${field} must be at most ${maxLength} characters`;
  return z
    .string({ errorMap: () => ({ message: `${field} must be a string` }) })
    .min(1, `${field} must not be empty`)
    .max(maxLength, tooLong)
    .optional()
    .describe(description);
}

function splitList(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}

/** A comma-separated list in the query (`a,b,c`); a JSON array in the POST body. */
export function listParam<T extends z.ZodTypeAny>(field: string, item: T, maxEntries: number, description: string) {
  return z
    .preprocess(
      splitList,
      z
        .array(item, { errorMap: () => ({ message: `${field} must be a comma-separated list` }) })
        .max(maxEntries, `${field} accepts at most ${maxEntries} entries`),
    )
    .optional()
    .describe(description);
}

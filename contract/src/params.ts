import { z } from 'zod';

/**
 * Builders for query parameters. Query values arrive as strings while the POST form sends JSON
 * values, so each builder accepts both. Every message names the field and its valid values.
 * `z.coerce.boolean()` is never used: it turns "false" into true.
 */

const BOOLEAN_WORDS: Record<string, boolean> = { true: true, false: false, '1': true, '0': false };
/** Every spelling a boolean may take in a query string: the OpenAPI document declares them all. */
export const QUERY_BOOLEAN_WORDS = Object.keys(BOOLEAN_WORDS);

function toBoolean(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return BOOLEAN_WORDS[value.trim().toLowerCase()] ?? value;
}

/**
 * Decimal notation only, as in JSON (an exponent allowed): JavaScript's Number() also reads "0x10",
 * "0b11", "0o7" and "Infinity", which no caller means as a number of seconds or pixels.
 */
const DECIMAL_NUMBER = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

/** A query string's number, read as decimal text only; anything else is left for the schema to refuse by name. */
export function fromDecimalText(value: unknown): unknown {
  if (typeof value !== 'string' || !DECIMAL_NUMBER.test(value)) return value;
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
 * stays undefined when absent; the documented default is applied by the code that uses it. It is
 * said in the description only: an OpenAPI `default` is sent as a real value by Swagger UI's
 * "Try it out" and generated clients, and sending it is not the same as leaving it out.
 */
export function optionalBooleanParam(field: string, documentedDefault: boolean, description: string) {
  const message = `${field} must be true or false`;
  return z
    .preprocess(toBoolean, z.boolean({ errorMap: () => ({ message }) }))
    .optional()
    .describe(`${description} Default: ${documentedDefault}.`);
}

interface NumberRange {
  min: number;
  max: number;
  unit?: string;
}

function numberSchema(field: string, { min, max, unit }: NumberRange) {
  const message = `${field} must be a number from ${min} to ${max}${unit ? ` (${unit})` : ''}`;
  return z.preprocess(
    fromDecimalText,
    z
      .number({ errorMap: () => ({ message }) })
      .finite(message)
      .min(min, message)
      .max(max, message),
  );
}

/** A number with a default the server applies. */
export function numberParam(field: string, range: NumberRange, defaultValue: number, description: string) {
  return numberSchema(field, range).default(defaultValue).describe(`${description} Default: ${defaultValue}.`);
}

/**
 * A number whose default depends on other parameters (viewport and scale come from the device
 * preset), so the parsed value stays undefined when absent. The documented default is in the
 * description only, never an OpenAPI `default`: Swagger UI would send viewportWidth=1920 with
 * device=iphone-15 and override the preset.
 */
export function optionalNumberParam(field: string, range: NumberRange, description: string, documentedDefault?: number) {
  return numberSchema(field, range)
    .optional()
    .describe(documentedDefault === undefined ? description : `${description} Default: ${documentedDefault}.`);
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

import { Ajv, type ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors.js';

/**
 * openaiSchema (issue #33): the caller's JSON Schema for the AI answer. It is compiled once (a
 * schema Ajv cannot compile is the caller's 400, before any work), sent to the model as a
 * structured output, and the model's answer is validated against it before it is returned parsed.
 * Compiled validators are kept per schema text, a bounded few.
 */

// strict: false: a schema written for OpenAI may carry keywords Ajv does not know (e.g. "strict" hints).
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const compiled = new LRUCache<string, ValidateFunction>({ max: 200 });

/** How the answer's problems are listed in the error message (the first few). */
const LISTED_PROBLEMS = 5;

function validatorFor(schemaText: string): ValidateFunction {
  const known = compiled.get(schemaText);
  if (known) return known;
  const validate = ajv.compile(JSON.parse(schemaText) as object);
  compiled.set(schemaText, validate);
  return validate;
}

/** A clean 400 naming openaiSchema when Ajv cannot compile it (unknown $ref, wrong keyword types, …). */
export function checkAiSchema(schemaText: string | undefined): void {
  if (schemaText === undefined) return;
  try {
    validatorFor(schemaText);
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'it cannot be compiled';
    throw new ApiError('VALIDATION_ERROR', `Validation failed: openaiSchema is not a usable JSON Schema: ${reason}`, {
      details: [{ field: 'openaiSchema', message: `not a usable JSON Schema: ${reason}`, value: schemaText.slice(0, 200) }],
    });
  }
}

/** The schema as OpenAI's response_format (json_schema). */
export function responseFormatFor(schemaText: string) {
  return {
    type: 'json_schema' as const,
    json_schema: {
      name: 'daguerre_result',
      schema: JSON.parse(schemaText) as Record<string, unknown>,
      // Not strict: OpenAI's strict mode refuses many valid schemas; the answer is validated here instead.
      strict: false,
    },
  };
}

const mismatch = (why: string, logDetail: unknown) =>
  new ApiError('AI_RESULT_INVALID', `AI analysis failed: the model's answer does not match openaiSchema (${why}); nothing was charged`, {
    logDetail,
  });

/** The model's answer parsed and checked against the schema; AI_RESULT_INVALID (502) when it does not match. */
export function parseAiAnswer(schemaText: string, text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw mismatch('the answer is not JSON', { stage: 'ai', answerLength: text.length });
  }
  const validate = validatorFor(schemaText);
  if (!validate(parsed)) {
    const problems = (validate.errors ?? [])
      .slice(0, LISTED_PROBLEMS)
      .map((problem) => `${problem.instancePath || '/'} ${problem.message ?? 'is invalid'}`);
    throw mismatch(problems.join('; '), { stage: 'ai', problems });
  }
  // The contract's root "type": "object" makes a valid answer an object.
  return parsed as Record<string, unknown>;
}

import { INSIGHT_LIMITS } from '@daguerre/contract';
import { ApiError } from '../errors.js';
import { ClientGoneError } from '../capture/capture-error.js';
import { SCHEMA_WORK_LIMIT_MS, SchemaChecker, SchemaCheckerBusy, SchemaWorkExceeded, type SchemaOutcome } from './schema-checker.js';

/**
 * openaiSchema: the caller's JSON Schema for the AI answer. It is compiled before any work (a
 * schema that cannot be compiled is the caller's 400), sent to the model as a structured output,
 * and the model's answer is checked against it before it is returned parsed. Both steps run in
 * worker threads (schema-checker.ts) with a linear-time regular-expression engine, each with an
 * Ajv of its own: nothing of one request's schema outlives it or is seen by another organization.
 */

/** One pool for the process; closed by the runtime on shutdown (it starts again if needed). */
export const schemaChecker = new SchemaChecker();

/** A schema of a request and the field it came in (`openaiSchema`, `requests[3].openaiSchema`). */
export interface SchemaField {
  field: string;
  text: string;
}

const invalidSchema = (field: string, text: string, reason: string) =>
  new ApiError('VALIDATION_ERROR', `Validation failed: ${field} is not a usable JSON Schema: ${reason}`, {
    details: [{ field, message: `not a usable JSON Schema: ${reason}`, value: text.slice(0, 200) }],
  });

const busy = () =>
  new ApiError(
    'SERVICE_UNAVAILABLE',
    'Service temporarily unavailable: too many JSON Schemas are waiting to be checked; retry shortly. Nothing was charged.',
    {
      retryAfterSeconds: 1,
    },
  );

/**
 * The cheap check of a whole request, before any schema is compiled: the different schemas
 * together stay within INSIGHT_LIMITS.openaiSchemaRequestMaxLength characters. Each schema's own
 * size and JSON were checked by the contract.
 */
export function checkSchemaBudget(schemas: SchemaField[]): void {
  const seen = new Set<string>();
  let total = 0;
  for (const { field, text } of schemas) {
    if (seen.has(text)) continue;
    seen.add(text);
    total += text.length;
    if (total > INSIGHT_LIMITS.openaiSchemaRequestMaxLength) {
      throw invalidSchema(
        field,
        text,
        `the different openaiSchemas of one request may have ${INSIGHT_LIMITS.openaiSchemaRequestMaxLength} characters together; this one brings them to ${total} (items that share one schema count it once)`,
      );
    }
  }
}

/**
 * A clean 400 naming the field when a schema cannot be compiled (unknown $ref, wrong keyword types,
 * a pattern RE2 cannot run, too much work); each different schema is compiled once. `about` says a
 * failure of the schema at that place of the list in its request's terms (a bulk names its item).
 * A request with several schemas runs checkSchemaBudget first; one schema is within it by the contract.
 */
export async function checkAiSchemas(
  organizationId: string,
  schemas: SchemaField[],
  options: { signal?: AbortSignal; about?: (error: unknown, at: number) => unknown } = {},
): Promise<void> {
  const about = options.about ?? ((error: unknown) => error);
  const compiled = new Set<string>();
  for (const [at, { field, text }] of schemas.entries()) {
    if (compiled.has(text)) continue;
    try {
      const outcome = await runMapped(organizationId, { op: 'compile', schema: text }, options.signal, (reason) =>
        invalidSchema(field, text, reason),
      );
      if (!outcome.ok) throw invalidSchema(field, text, compileReason(outcome));
    } catch (error) {
      throw about(error, at);
    }
    compiled.add(text);
  }
}

function compileReason(outcome: Extract<SchemaOutcome, { ok: false }>): string {
  if (outcome.unsupportedPattern === undefined) return outcome.reason;
  return `the pattern ${JSON.stringify(outcome.unsupportedPattern)} cannot be used (${outcome.patternProblem}): patterns run on RE2, a linear-time engine without lookaround or backreferences (https://github.com/google/re2/wiki/Syntax)`;
}

/** The pool's own failures as the API's: too much work is the schema's fault, a full pool is the service's. */
async function runMapped(
  organizationId: string,
  task: Parameters<SchemaChecker['run']>[1],
  signal: AbortSignal | undefined,
  tooMuchWork: (reason: string) => ApiError,
): Promise<SchemaOutcome> {
  try {
    return await schemaChecker.run(organizationId, task, signal);
  } catch (error) {
    if (error instanceof SchemaWorkExceeded)
      throw tooMuchWork(`checking it takes ${error.message} (the limit is ${SCHEMA_WORK_LIMIT_MS / 1000} s); simplify it`);
    if (error instanceof SchemaCheckerBusy) throw busy();
    if (error instanceof ClientGoneError) throw error;
    throw new ApiError('INTERNAL_ERROR', 'The JSON Schema could not be checked; nothing was charged', { logDetail: error });
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
export async function parseAiAnswer(
  organizationId: string,
  schemaText: string,
  text: string,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw mismatch('the answer is not JSON', { stage: 'ai', answerLength: text.length });
  }
  const outcome = await runMapped(organizationId, { op: 'validate', schema: schemaText, answer: text }, signal, (reason) =>
    mismatch(reason, { stage: 'ai', answerLength: text.length }),
  );
  // Compiled at the request's start; failing now would mean the pool changed under it.
  if (!outcome.ok) throw mismatch(`the schema could not be compiled: ${outcome.reason}`, { stage: 'ai' });
  const problems = outcome.problems ?? [];
  if (problems.length > 0) throw mismatch(problems.join('; '), { stage: 'ai', problems });
  // The contract's root "type": "object" makes a valid answer an object.
  return parsed as Record<string, unknown>;
}

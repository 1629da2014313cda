// @ts-check
/**
 * Compiles and applies a caller's JSON Schema (openaiSchema) in a worker thread of its own
 * (services/schema-checker.ts runs it through a piscina pool), so a schema that takes long to
 * compile never holds the event loop every organization shares.
 *
 * Plain JavaScript on purpose: the same file runs in a checkout (TypeScript through tsx), under
 * vitest and from the installed package's bundle, and a worker thread gets none of their loaders.
 *
 * Every task compiles with an Ajv instance of its own: a schema's `$id`s exist for that task only
 * (one caller's `$id` can neither clash with nor be `$ref`'d by another's), and the compiled code is
 * garbage as soon as the task ends. Patterns (`pattern`, `patternProperties`) run on RE2, whose
 * matching time is linear in the input: `^(a+)+$` against a long answer cannot backtrack for
 * seconds. RE2 has no lookaround or backreferences; such a pattern fails to compile and is named.
 * https://ajv.js.org/options.html#code (code.regExp) · https://github.com/google/re2/wiki/Syntax
 */
import process from 'node:process';
import { setImmediate } from 'node:timers';
import { Ajv } from 'ajv';
import { RE2 } from 're2-wasm';

/** How the answer's problems are listed (the first few). */
const LISTED_PROBLEMS = 5;

/**
 * re2-wasm runs in a WebAssembly heap of a fixed 16 MB, and a compiled pattern lives there until
 * its wrapper is deleted (nothing frees it on garbage collection): undeleted, a few thousand
 * patterns fill it and the module aborts for good. So every pattern a task compiles is deleted when
 * the task ends, and a thread whose module aborted (a pattern too big for the heap) or that has
 * compiled many patterns ends after answering; the pool starts a fresh one.
 */
const RECYCLE_AFTER_PATTERNS = 20_000;
/** @type {RE2[]} */
const compiledPatterns = [];
let patternsCompiled = 0;
let moduleAborted = false;

/** Ajv calls the engine as a function; re2-wasm is a class and always wants the `u` flag. */
const re2 = Object.assign(
  (/** @type {string} */ pattern, /** @type {string} */ flags) => {
    const compiled = new RE2(pattern, flags.includes('u') ? flags : `${flags}u`);
    compiledPatterns.push(compiled);
    patternsCompiled += 1;
    return compiled;
  },
  { code: 'new RE2' },
);

function releasePatterns() {
  for (const compiled of compiledPatterns.splice(0)) {
    try {
      /** @type {{ wrapper: { delete(): void } }} */ (/** @type {unknown} */ (compiled)).wrapper.delete();
    } catch {
      // An aborted module cannot delete; the thread ends below.
    }
  }
  if (moduleAborted || patternsCompiled > RECYCLE_AFTER_PATTERNS) {
    // After the answer has been posted: piscina replaces a thread that ended between tasks. Piscina
    // posts it only once stderr has drained (an aborted module has written its reason there), so the
    // thread ends after a drain of its own, a turn of the loop after piscina's.
    setImmediate(() => process.stderr.write('', () => process.stdout.write('', () => setImmediate(() => process.exit(0)))));
  }
}

/** @param {unknown} error */
function noteAbort(error) {
  if (error instanceof globalThis.WebAssembly.RuntimeError) moduleAborted = true;
}

/** @param {string} schemaText */
function compile(schemaText) {
  // strict: false: a schema written for OpenAI may carry keywords Ajv does not know (e.g. "strict" hints).
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, code: { regExp: re2 } });
  return ajv.compile(JSON.parse(schemaText));
}

/** @param {unknown} error */
function compileProblem(error) {
  if (error instanceof globalThis.WebAssembly.RuntimeError) {
    return {
      ok: false,
      reason: 'its patterns need more memory than the regular-expression engine has (16 MB): make them shorter or fewer',
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  // re2-wasm's SyntaxError: "Invalid regular expression: /(?=a)/u: invalid perl operator: (?=".
  const pattern = /^Invalid regular expression: \/(.*)\/[a-z]*: (.*)$/s.exec(message);
  if (pattern) return { ok: false, reason: message, unsupportedPattern: pattern[1], patternProblem: pattern[2] };
  return { ok: false, reason: message };
}

/**
 * @param {({ op: 'compile', schema: string } | { op: 'validate', schema: string, answer: string }) & { startedAt?: BigInt64Array }} task
 * @returns {{ ok: true, problems?: string[] } | { ok: false, reason: string, unsupportedPattern?: string, patternProblem?: string }}
 */
export default function check(task) {
  // The pool counts this task's time limit from here, not from when it was queued.
  if (task.startedAt) Atomics.store(task.startedAt, 0, BigInt(Date.now()));
  try {
    let validate;
    try {
      validate = compile(task.schema);
    } catch (error) {
      noteAbort(error);
      return compileProblem(error);
    }
    if (task.op === 'compile') return { ok: true };
    let valid;
    try {
      valid = validate(JSON.parse(task.answer));
    } catch (error) {
      noteAbort(error);
      // An answer nested deeper than the validator's stack, say: the answer's fault, not the service's.
      return { ok: true, problems: [`the answer could not be checked (${error instanceof Error ? error.message : String(error)})`] };
    }
    if (valid) return { ok: true, problems: [] };
    const problems = (validate.errors ?? [])
      .slice(0, LISTED_PROBLEMS)
      .map((problem) => `${problem.instancePath || '/'} ${problem.message ?? 'is invalid'}`);
    return { ok: true, problems };
  } finally {
    releasePatterns();
  }
}

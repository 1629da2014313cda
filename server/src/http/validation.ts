import type { ValidationIssue } from '@daguerre/contract';
import { MISSING_FIELD_PARAM } from '@daguerre/contract';
import type { ZodError, ZodIssue } from 'zod';
import { ApiError, validationError } from '../errors.js';
import { echoableName, echoableValue, maskUserinfo } from '../security/redaction.js';

function valueAt(input: unknown, path: (string | number)[]): unknown {
  let current = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

function toIssues(issue: ZodIssue, input: unknown): ValidationIssue[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      field: echoableName(key),
      message: `${echoableName(key)} is not a parameter of this endpoint (names are case-sensitive; see /docs)`,
      value: echoableValue(key, valueAt(input, [key])),
    }));
  }
  const field = String(issue.path[0] ?? 'request');
  // A secret is never echoed back, not even when it was rejected; matched by meaning (docs/containment.md).
  const value = echoableValue(field, valueAt(input, issue.path.slice(0, 1)));
  return [{ field, message: maskUserinfo(issue.message), value }];
}

/** Turns zod issues into the API's VALIDATION_ERROR (or MISSING_REQUIRED_FIELD when only fields are missing). */
export function zodIssuesToApiError(error: ZodError | null | undefined, input?: unknown): ApiError {
  if (!error) return new ApiError('VALIDATION_ERROR', 'Validation failed');
  const issues = error.issues.flatMap((issue) => toIssues(issue, input));
  const onlyMissing = error.issues.every((i) => i.code === 'custom' && i.params?.errorCode === MISSING_FIELD_PARAM.errorCode);
  return validationError(issues, onlyMissing ? 'MISSING_REQUIRED_FIELD' : 'VALIDATION_ERROR');
}

import { z } from 'zod';
import { withOpenApi } from './openapi-meta.js';

/** Every error code the API answers (docs/reference/api.md, "Error codes"). */
export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'MISSING_REQUIRED_FIELD',
  'INVALID_INPUT',
  'NOT_FOUND',
  'API_KEY_REQUIRED',
  'INVALID_API_KEY',
  'API_KEY_EXPIRED',
  'HTTPS_REQUIRED',
  'INVALID_SIGNATURE',
  'SIGNED_LINK_EXPIRED',
  'SIGNATURE_REQUIRED',
  'INSUFFICIENT_CREDITS',
  'TARGET_PROTECTED',
  'TARGET_HTTP_ERROR',
  'NO_ORGANIZATION_CONTEXT',
  'MEMBERSHIP_INACTIVE',
  'RATE_LIMIT_EXCEEDED',
  'CONCURRENCY_LIMIT_EXCEEDED',
  'QUOTA_EXCEEDED',
  'INTERNAL_ERROR',
  'OPERATION_FAILED',
  'SERVICE_UNAVAILABLE',
  'CAPTURE_TIMEOUT',
  'PAGE_UNRESPONSIVE',
  'JOB_NOT_FINISHED',
  'PAGE_MEMORY_LIMIT',
  'CAPTURE_BLANK',
  'NO_CONTENT',
  'CONTENT_TOO_LARGE',
  'AI_RESULT_INVALID',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export const ValidationIssueSchema = withOpenApi(
  z.object({
    field: z.string().describe('Name of the rejected parameter'),
    message: z.string().describe('What is wrong, with the valid values'),
    value: z.unknown().describe('The rejected value'),
  }),
  { title: 'ValidationIssue' },
);
export type ValidationIssue = z.infer<typeof ValidationIssueSchema>;

export const ErrorBodySchema = withOpenApi(
  z.object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(ERROR_CODES).describe('Machine-readable error code'),
      message: z.string().describe('Human-readable message, safe to show'),
      details: z
        .union([z.string(), z.array(ValidationIssueSchema), z.record(z.unknown())])
        .optional()
        .describe('For VALIDATION_ERROR: one entry per rejected field'),
    }),
  }),
  { title: 'ErrorResponse' },
);
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

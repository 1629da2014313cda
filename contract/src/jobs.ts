import { z } from 'zod';
import { applyPdfOverrides, captureFields, checkCrossFieldRules } from './capture.js';
import { AiResultOrObjectSchema, PageReportSchema } from './capture-result.js';
import { LIMITS } from './limits.js';
import { CaptureQualitySchema, PageMetadataSchema } from './page-insight.js';
import { withOpenApi } from './openapi-meta.js';

export const JOB_STATUSES = ['queued', 'active', 'succeeded', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** A webhook address: absolute http(s), no credentials (an async job's, a batch's). */
export const webhookUrlField = (description: string) =>
  z
    .string({ errorMap: () => ({ message: 'webhookUrl must be a string' }) })
    .max(LIMITS.urlMaxLength, `webhookUrl must be at most ${LIMITS.urlMaxLength} characters`)
    .refine((value) => {
      try {
        const parsed = new URL(value);
        return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && !parsed.username && !parsed.password;
      } catch {
        return false;
      }
    }, 'webhookUrl must be an absolute http:// or https:// URL without credentials')
    .optional()
    .describe(description);

const webhookUrl = webhookUrlField(
  "Called with POST when the job ends (capture.succeeded or capture.failed), signed with the Standard Webhooks scheme using the API key's signing secret. Retried with exponential backoff on a non-2xx answer or a timeout.",
);

// Every capture parameter except returnFile (an async result is always a file), plus webhookUrl.
const { returnFile: _returnFile, ...captureFieldsButReturnFile } = captureFields;
/** The fields of `POST /captures`; a bulk item takes the same (contract/src/bulk.ts). */
export const asyncCaptureFields = { ...captureFieldsButReturnFile, webhookUrl };
const asyncCaptureObject = z.object(asyncCaptureFields).strict();

/** The JSON body of `POST /captures`: the same rules as `/capture`, checked before the job is queued. */
export const AsyncCaptureBodySchema = withOpenApi(
  asyncCaptureObject
    .superRefine((options, ctx) => checkCrossFieldRules({ ...options, returnFile: true }, ctx))
    .transform((options) => applyPdfOverrides({ ...options, returnFile: true })),
  { title: 'AsyncCaptureRequest' },
);
export type AsyncCaptureOptions = z.output<typeof AsyncCaptureBodySchema>;
export type AsyncCaptureInput = z.input<typeof asyncCaptureObject>;

export const AsyncCaptureAcceptedSchema = withOpenApi(
  z.object({
    success: z.literal(true),
    data: z.object({
      jobId: z.string().uuid().describe('Identifier of the job'),
      status: z.literal('queued'),
      statusUrl: z.string().describe('Where to poll the job: GET /captures/{jobId}'),
    }),
  }),
  { title: 'AsyncCaptureAccepted' },
);
export type AsyncCaptureAccepted = z.infer<typeof AsyncCaptureAcceptedSchema>;

export const CaptureJobResultSchema = withOpenApi(
  z.object({
    fileName: z.string().describe('Generated file name'),
    fileSize: z.number().int().describe('Size of the file in bytes'),
    processingTime: z.number().int().describe('Milliseconds the render took (from the job start)'),
    mime: z.string().describe('Content type of the file, e.g. image/png'),
    fileUrl: z.string().describe('Where to download the file: GET /captures/{jobId}/file (same key)'),
    url: z.string().optional().describe('Storage URL; present when storage was used'),
    aiResult: AiResultOrObjectSchema.optional().describe(
      'Present when openaiPrompt was given ({text, model}; with openaiSchema, the parsed answer)',
    ),
    page: PageReportSchema.optional().describe('What the capture saw: target status, final URL, title, captured size, truncation'),
    metadata: PageMetadataSchema.optional().describe('Present when metadata=true and it was read in time (page.inspectionTimedOut)'),
    quality: CaptureQualitySchema.optional().describe('The capture quality report'),
  }),
  { title: 'CaptureJobResult' },
);

export const CaptureJobSchema = withOpenApi(
  z.object({
    success: z.literal(true),
    data: z.object({
      jobId: z.string().uuid(),
      status: z.enum(JOB_STATUSES).describe('queued, active, succeeded or failed'),
      createdAt: z.string().describe('ISO 8601 time the job was accepted'),
      startedAt: z.string().optional().describe('ISO 8601 time a worker started the job'),
      finishedAt: z.string().optional().describe('ISO 8601 time the job ended'),
      creditsCharged: z
        .number()
        .int()
        .describe(
          'Credits this job has been charged: set once, when it succeeds with a file you can fetch; 0 while it runs and for a failed job (a failed job is never charged)',
        ),
      result: CaptureJobResultSchema.optional().describe('Present when status is succeeded'),
      error: z
        .object({ code: z.string().describe('The error code a synchronous capture would have answered'), message: z.string() })
        .optional()
        .describe('Present when status is failed'),
    }),
  }),
  { title: 'CaptureJob' },
);
export type CaptureJob = z.infer<typeof CaptureJobSchema>;
export type CaptureJobData = CaptureJob['data'];

import {
  AiResultOrObjectSchema,
  CaptureQualitySchema,
  JOB_STATUSES,
  PageMetadataSchema,
  PageReportSchema,
  QUALITY_CHECKS,
  type QualityCheck,
} from '@daguerre/contract';
import type { CaptureFile } from '@daguerre/client';
import { z } from 'zod';

/**
 * The structuredContent of `capture` and `get_capture`, declared as their outputSchema from the
 * contract's own schemas: what the capture saw (page), the quality report, the page's metadata
 * (metadata=true) and the AI answer, as an async job's result (CaptureJobResult) and a JSON
 * capture (CaptureResult) carry them. Every non-error result of those tools carries it (the SDK's
 * server refuses one without it, "Output validation error"), and so may an error result: the SDK's
 * client checks any structuredContent against the schema, errors included.
 */
export const captureOutputSchema = z
  .object({
    id: z
      .string()
      .optional()
      .describe(
        'The jobId (for get_capture); for a capture made without async jobs, the request id; absent when the request was refused before any capture',
      ),
    status: z
      .enum(JOB_STATUSES)
      .describe('succeeded; queued or active while the capture still runs (call get_capture with id); failed with error'),
    url: z
      .string()
      .optional()
      .describe('Where the file is: <service>/captures/{jobId}/file (resources/read, or GET with the same key), a storage URL, or empty'),
    contentType: z.string().optional().describe('Media type of the file, e.g. image/png, text/markdown, application/pdf'),
    bytes: z.number().int().optional().describe('Size of the file in bytes'),
    width: z.number().int().nullable().optional().describe('Pixel width of an image that was measured (null otherwise)'),
    height: z.number().int().nullable().optional().describe('Pixel height of an image that was measured (null otherwise)'),
    delivery: z
      .enum(['inline', 'link', 'embedded'])
      .optional()
      .describe('inline: in the content; link: a resource_link; embedded: an embedded resource'),
    text: z.string().optional().describe('The file as text, when a text format (html, markdown, text) came back inline'),
    processingTime: z.number().int().optional().describe('Milliseconds the render took'),
    page: PageReportSchema.partial()
      .optional()
      .describe('What the capture saw: target status, final URL, title, captured size, truncation'),
    quality: CaptureQualitySchema.optional().describe('The capture quality report'),
    metadata: PageMetadataSchema.partial()
      .optional()
      .describe('The page metadata, with metadata=true (a pdf captured without async jobs has the compact form: sha256, title, language)'),
    aiResult: AiResultOrObjectSchema.optional().describe('The AI answer, with openaiPrompt'),
    error: z
      .object({ status: z.number().int().optional(), code: z.string(), message: z.string(), details: z.unknown().optional() })
      .optional()
      .describe('Why the capture failed or was refused (an error result): the service error code, e.g. VALIDATION_ERROR, and its message'),
  })
  .passthrough();

export type CaptureInsight = Pick<z.infer<typeof captureOutputSchema>, 'page' | 'quality' | 'metadata' | 'aiResult' | 'processingTime'>;

/** What a job result or a JSON capture says about the capture, without the fields left out. */
export function insightOf(result: {
  page?: unknown;
  quality?: unknown;
  metadata?: unknown;
  aiResult?: unknown;
  processingTime?: number;
}): CaptureInsight {
  const insight: Record<string, unknown> = {};
  for (const key of ['page', 'quality', 'metadata', 'aiResult', 'processingTime'] as const) {
    if (result[key] !== undefined) insight[key] = result[key];
  }
  return insight as CaptureInsight;
}

function decodedHeader(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * A binary capture's insight from its headers (the only form a sync pdf has): the page report of
 * X-Target-Status, X-Final-Url and the X-Capture-* flags, the quality of X-Capture-Quality(-Findings),
 * and with metadata=true the compact metadata of X-Capture-Sha256, X-Page-Title, X-Page-Language.
 */
export function insightFromHeaders(file: CaptureFile): CaptureInsight {
  const { headers } = file;
  const title = decodedHeader(headers['x-page-title']);
  const page = {
    status: file.targetStatus,
    finalUrl: file.finalUrl,
    truncated: file.truncated,
    waitTimedOut: file.waitTimedOut,
    stillGrowing: file.stillGrowing,
    inspectionTimedOut: file.inspectionTimedOut,
  };
  const checks = (headers['x-capture-quality-findings'] ?? '')
    .split(',')
    .map((check) => check.trim())
    .filter((check): check is QualityCheck => (QUALITY_CHECKS as readonly string[]).includes(check));
  const insight: CaptureInsight = { page: title === undefined ? page : { ...page, title } };
  if (headers['x-capture-quality']) {
    insight.quality = {
      ok: headers['x-capture-quality'] === 'ok',
      findings: checks.map((check) => ({
        check,
        message: `${check} (reported by X-Capture-Quality-Findings; an async capture has the details)`,
      })),
    };
  }
  if (headers['x-capture-sha256']) {
    const language = headers['x-page-language'];
    insight.metadata = {
      sha256: headers['x-capture-sha256'],
      ...(title !== undefined ? { title } : {}),
      ...(language ? { language } : {}),
    };
  }
  return insight;
}

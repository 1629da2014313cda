/** The JSON answer of a capture (`returnFile=false`): the file's data, the AI result and what the capture saw. */
import { z } from 'zod';
import { withOpenApi } from './openapi-meta.js';
import { CaptureQualitySchema, PageMetadataSchema } from './page-insight.js';

export const AiResultSchema = z.object({
  text: z.string().describe('The analysis'),
  model: z.string().describe('The model name'),
});

/** With openaiSchema, the model's answer parsed and validated: an object of the caller's shape. */
export const AiResultOrObjectSchema = z.union([AiResultSchema, z.record(z.unknown()).describe('The answer in the shape of openaiSchema')]);

/** What the capture saw (docs/capture-fidelity.md); also in the headers X-Target-Status, X-Final-Url and X-Capture-Truncated. */
export const PageReportSchema = withOpenApi(
  z.object({
    status: z.number().int().nullable().describe('HTTP status of the main document (after redirects); null in html mode'),
    finalUrl: z.string().nullable().describe('URL of the captured document after redirects (credentials removed); null in html mode'),
    title: z.string().describe('document.title when the capture was taken'),
    width: z
      .number()
      .int()
      .describe(
        'Width in CSS pixels of what was captured: the whole document for fullPage and pdf, the element for clipSelector, the viewport otherwise',
      ),
    height: z
      .number()
      .int()
      .describe('Height in CSS pixels of what was captured (the whole document for fullPage and pdf, also when the image was cut)'),
    truncated: z.boolean().describe('True when the image was cut to the full-page budget (as X-Capture-Truncated)'),
    waitTimedOut: z
      .boolean()
      .describe(
        'True when waitUntil was not reached within its budget and the page was captured as it was (best attempt; as X-Capture-Wait-Timed-Out)',
      ),
    stillGrowing: z
      .boolean()
      .describe(
        "True when fullPageScroll stopped (at fullPageScrollDuration or the full-page height budget) while the page was still growing, or when the page got taller while it was taken (a full page is taken again once first); the quality report's stillGrowing finding says the same (as X-Capture-Still-Growing)",
      ),
    inspectionTimedOut: z
      .boolean()
      .describe(
        "True when reading the page after its file was taken did not end within the deadline and a short grace: the file is delivered and charged as it was taken, but title is empty, width and height are the viewport's, quality holds only the check of the pixels (ok false) and metadata is left out (as X-Capture-Inspection-Timed-Out)",
      ),
  }),
  { title: 'PageReport' },
);
export type PageReport = z.infer<typeof PageReportSchema>;

export const CaptureResultSchema = withOpenApi(
  z.object({
    success: z.literal(true),
    data: z.object({
      requestId: z.string().uuid().describe('Unique identifier of the request'),
      fileName: z.string().describe('Generated file name'),
      processingTime: z.number().int().describe('Milliseconds taken'),
      fileSize: z.number().int().describe('Size of the file in bytes'),
      url: z.string().url().optional().describe('Storage URL; present when storage is configured'),
      imageData: z.string().optional().describe('Data URI with base64 image data (data:<mime>;base64,<data>); not for pdf'),
      content: z
        .string()
        .optional()
        .describe('The file as text, for the content formats html, markdown, text and mhtml (instead of imageData)'),
      aiResult: AiResultOrObjectSchema.optional().describe(
        'Present when openaiPrompt was given: {text, model}; with openaiSchema, the answer parsed and validated against the schema',
      ),
      page: PageReportSchema.describe('What the capture saw: target status, final URL, title, captured size, truncation'),
      metadata: PageMetadataSchema.optional().describe('Present when metadata=true and it was read in time (page.inspectionTimedOut)'),
      quality: CaptureQualitySchema.describe('The capture quality report (also X-Capture-Quality)'),
    }),
  }),
  { title: 'CaptureResult' },
);
export type CaptureResult = z.infer<typeof CaptureResultSchema>;

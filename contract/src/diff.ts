/** `POST /diff`: the comparison of two captures, once, with a monitor's comparison options. */
import { z } from 'zod';
import { captureFields } from './capture.js';
import { CaptureDiffSchema, ok } from './monitor-responses.js';
import { ignoreSelectors, monitorCaptureFields, threshold } from './monitors.js';
import { withOpenApi } from './openapi-meta.js';

/** One side of POST /diff: a URL to capture now, or a capture made before. */
const diffSide = (field: 'before' | 'after') =>
  z
    .object({
      url: captureFields.url.describe('A page to capture now (charged as a capture)'),
      runId: z.string().uuid(`${field}.runId must be the runId of a monitor run`).optional().describe('A monitor run of the organization'),
      jobId: z
        .string()
        .uuid(`${field}.jobId must be the jobId of an async capture`)
        .optional()
        .describe('A succeeded async capture (POST /captures) of the organization, in png'),
    })
    .strict()
    .superRefine((side, ctx) => {
      const given = ['url', 'runId', 'jobId'].filter((key) => side[key as keyof typeof side] !== undefined);
      if (given.length !== 1)
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['url'], message: `${field}: give exactly one of url, runId or jobId` });
    })
    .describe(`${field === 'before' ? 'The older' : 'The newer'} capture: {url}, {runId} or {jobId}`);

/** `POST /diff`. */
export const DiffBodySchema = withOpenApi(
  z
    .object({
      before: diffSide('before'),
      after: diffSide('after'),
      threshold: threshold.optional(),
      ignoreSelectors,
      ...monitorCaptureFields,
    })
    .strict(),
  { title: 'DiffRequest' },
);
export type DiffBody = z.output<typeof DiffBodySchema>;
export type DiffInput = z.input<typeof DiffBodySchema>;

export const DiffResponseSchema = ok(
  z.object({
    diff: CaptureDiffSchema,
    before: z.object({ imageUrl: z.string().nullable(), requestId: z.string().nullable() }),
    after: z.object({ imageUrl: z.string().nullable(), requestId: z.string().nullable() }),
    creditsCharged: z
      .number()
      .int()
      .describe('Credits of the captures it made (one per url side); 0 when both sides were earlier captures'),
  }),
  'DiffResponse',
);
export type DiffResponse = z.infer<typeof DiffResponseSchema>;

/** What the monitor routes answer: a monitor, its runs, the comparison of a run with its baseline. */
import { z } from 'zod';
import { withOpenApi } from './openapi-meta.js';

export const MONITOR_RUN_STATUSES = ['running', 'succeeded', 'failed'] as const;
export type MonitorRunStatus = (typeof MONITOR_RUN_STATUSES)[number];

export const ChangedRegionSchema = withOpenApi(
  z
    .object({ x: z.number().int(), y: z.number().int(), width: z.number().int(), height: z.number().int() })
    .describe('A box of changed pixels, in pixels of the capture'),
  { title: 'ChangedRegion' },
);
export type ChangedRegion = z.infer<typeof ChangedRegionSchema>;

/** A comparison of two captures: a monitor run against its baseline, or POST /diff. */
export const CaptureDiffSchema = withOpenApi(
  z.object({
    diffPercent: z.number().describe('Percent of the pixels that differ (anti-aliasing is not counted as a difference), 0–100'),
    changed: z.boolean().describe('Whether diffPercent reached the threshold'),
    threshold: z.number().describe('The threshold it was compared with'),
    changedPixels: z.number().int(),
    width: z
      .number()
      .int()
      .describe('Width of the compared images (the larger of the two; a size change counts the extra area as changed)'),
    height: z.number().int(),
    regions: z.array(ChangedRegionSchema).describe('Boxes around the changed areas, largest first (at most 50)'),
    textAdded: z.array(z.string()).describe("Lines of the page's text (its markdown) that the newer capture has and the older has not"),
    textRemoved: z.array(z.string()).describe('Lines the older capture has and the newer has not'),
    diffImageUrl: z.string().nullable().describe('The changed pixels highlighted over the newer capture (PNG); null when nothing changed'),
  }),
  { title: 'CaptureDiff' },
);
export type CaptureDiff = z.infer<typeof CaptureDiffSchema>;

export const MonitorRunSchema = withOpenApi(
  z.object({
    runId: z.string().uuid(),
    monitorId: z.string().uuid(),
    status: z.enum(MONITOR_RUN_STATUSES),
    startedAt: z.string().datetime(),
    finishedAt: z.string().datetime().nullable(),
    requestId: z.string().nullable().describe('The capture of the run in the request log (GET /captures)'),
    credits: z.number().int().describe('Credits the run was charged: those of its capture; 0 for a failed run'),
    targetStatus: z.number().int().nullable().describe("The target's HTTP status"),
    loadMs: z.number().int().nullable().describe('Milliseconds the capture took'),
    error: z.object({ code: z.string(), message: z.string() }).nullable().describe('Why the run failed'),
    imageUrl: z.string().nullable().describe("The run's capture (PNG)"),
    golden: z.boolean().describe('Whether this run is the pinned baseline'),
    baselineRunId: z
      .string()
      .nullable()
      .describe('The run it was compared with: the golden run, else the previous succeeded run; null for the first'),
    // A title of its own: a nullable copy under CaptureDiff's title would clash with CaptureDiff in the OpenAPI components.
    diff: withOpenApi(CaptureDiffSchema.nullable(), {
      title: 'CaptureDiffOrNull',
      description: 'The comparison with the baseline; null for the first run and for failed runs',
    }),
  }),
  { title: 'MonitorRun' },
);
export type MonitorRun = z.infer<typeof MonitorRunSchema>;

export const MonitorSchema = withOpenApi(
  z.object({
    monitorId: z.string().uuid(),
    name: z.string(),
    url: z.string(),
    intervalSeconds: z.number().int(),
    threshold: z.number(),
    webhookUrl: z.string().nullable(),
    ignoreSelectors: z.array(z.string()),
    options: z.record(z.unknown()).describe('The capture options it runs with'),
    paused: z.boolean(),
    pausedReason: z
      .enum(['user', 'credits'])
      .nullable()
      .describe(
        'user: paused by PATCH or the dashboard; credits: paused because the organization ran out of credits (resumed when credits return)',
      ),
    goldenRunId: z.string().nullable().describe('The run pinned as the baseline; null: each run is compared with the one before'),
    lastRun: withOpenApi(MonitorRunSchema.nullable(), { title: 'MonitorRunOrNull', description: 'The newest run; null before the first' }),
    nextRunAt: z.string().datetime().nullable().describe('When it runs next; null while paused'),
    createdAt: z.string().datetime(),
  }),
  { title: 'Monitor' },
);
export type Monitor = z.infer<typeof MonitorSchema>;

/** A success envelope `{ success: true, data }` under its own OpenAPI title. */
export const ok = <T extends z.ZodTypeAny>(data: T, title: string) => withOpenApi(z.object({ success: z.literal(true), data }), { title });
export const MonitorResponseSchema = ok(MonitorSchema, 'MonitorResponse');
export const MonitorListSchema = ok(z.object({ monitors: z.array(MonitorSchema) }), 'MonitorList');
export const MonitorRunListSchema = ok(
  z.object({ runs: z.array(MonitorRunSchema).describe('Newest first'), nextCursor: z.string().nullable() }),
  'MonitorRunList',
);
export const MonitorRunResponseSchema = ok(MonitorRunSchema, 'MonitorRunResponse');

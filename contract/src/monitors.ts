import { z } from 'zod';
import { captureFields, checkCrossFieldRules } from './capture.js';
import { webhookUrlField } from './jobs.js';
import { withOpenApi } from './openapi-meta.js';
import { fromDecimalText, listParam } from './params.js';

/**
 * Monitors: a page captured on a schedule and compared with its baseline (the previous run, or a
 * run pinned as golden), in pixels and in words; a signed webhook when it changed past the
 * threshold or when a run failed. And `POST /diff`, the same comparison once.
 */

/**
 * The capture options a monitor takes: those that shape an image. Left out: html (a monitor
 * watches a URL), the format (a monitor's capture is a PNG, the format its diff reads), pdf, video,
 * AI, storage and cache options, failOnHttpError (a run fails on a status change by itself), and the
 * options that carry secrets (headers, proxyUsername, proxyPassword), which a schedule would have to
 * keep.
 */
export const MONITOR_CAPTURE_FIELDS = [
  'scaleFactor',
  'device',
  'viewportWidth',
  'viewportHeight',
  'theme',
  'fullPage',
  'fullPageScroll',
  'fullPageScrollDuration',
  'clipSelector',
  'delay',
  'waitUntil',
  'waitForSelector',
  'failOnWaitTimeout',
  'removeAds',
  'removeCookieBanners',
  'removeSelectors',
  'blockResources',
  'blockUrls',
  'hideSelectors',
  'styles',
  'timezone',
  'locale',
  'mediaType',
  'reducedMotion',
  'scripts',
  'click',
  'scrollIntoView',
  'omitBackground',
  'userAgent',
  'latitude',
  'longitude',
  'proxyUrl',
] as const satisfies readonly (keyof typeof captureFields)[];
export type MonitorCaptureField = (typeof MONITOR_CAPTURE_FIELDS)[number];

const monitorCaptureFields = Object.fromEntries(MONITOR_CAPTURE_FIELDS.map((name) => [name, captureFields[name]])) as Pick<
  typeof captureFields,
  MonitorCaptureField
>;

export const MONITOR_LIMITS = {
  /** The contract's floor; the server's MONITOR_MIN_INTERVAL_SECONDS (60 by default) is checked by the server. */
  intervalSeconds: { min: 1, max: 30 * 86_400 },
  ignoreSelectors: 20,
  nameMaxLength: 200,
} as const;

const intervalMessage = `intervalSeconds must be a whole number of seconds from the server's MONITOR_MIN_INTERVAL_SECONDS (60 by default) to ${MONITOR_LIMITS.intervalSeconds.max}`;
const intervalSeconds = z
  .preprocess(
    fromDecimalText,
    z
      .number({ errorMap: () => ({ message: intervalMessage }) })
      .int(intervalMessage)
      .min(MONITOR_LIMITS.intervalSeconds.min, intervalMessage)
      .max(MONITOR_LIMITS.intervalSeconds.max, intervalMessage),
  )
  .describe('Seconds between two runs. At least MONITOR_MIN_INTERVAL_SECONDS (a server setting, 60 by default).');

const thresholdMessage = 'threshold must be a number from 0 to 100 (percent of the pixels)';
const threshold = z
  .preprocess(
    fromDecimalText,
    z
      .number({ errorMap: () => ({ message: thresholdMessage }) })
      .min(0, thresholdMessage)
      .max(100, thresholdMessage),
  )
  .describe(
    'Percent of the pixels (0–100) that must differ from the baseline for a run to count as a change and send monitor.changed. Default: 1.',
  );

const ignoreSelectors = listParam(
  'ignoreSelectors',
  z
    .string({ errorMap: () => ({ message: 'ignoreSelectors must be a list of CSS selectors' }) })
    .min(1, 'ignoreSelectors must not hold an empty selector')
    .max(500, 'each of ignoreSelectors must be at most 500 characters'),
  MONITOR_LIMITS.ignoreSelectors,
  'CSS selectors of regions whose changes never count: hidden (visibility: hidden, so the layout stays) in every run, and left out of the text compared. E.g. [".ad-slot", "#clock"].',
);

const name = z
  .string({ errorMap: () => ({ message: 'name must be a string' }) })
  .min(1, 'name must not be empty')
  .max(MONITOR_LIMITS.nameMaxLength, `name must be at most ${MONITOR_LIMITS.nameMaxLength} characters`)
  .describe('A name to tell monitors apart. Default: the URL.');

const paused = z
  .boolean({ errorMap: () => ({ message: 'paused must be true or false' }) })
  .describe('A paused monitor does not run. Default: false.');

const monitorWebhookUrl = webhookUrlField(
  "Called with POST for monitor.changed (the change passed the threshold), monitor.failed (a run failed, or the target's status left 2xx), monitor.paused and monitor.resumed (credits ran out, came back), signed with the Standard Webhooks scheme using the signing secret of the key that created the monitor.",
);

/** `POST /monitors`. */
export const CreateMonitorBodySchema = withOpenApi(
  z
    .object({
      url: captureFields.url.unwrap().describe('The page to watch (http or https).'),
      intervalSeconds,
      threshold: threshold.optional(),
      webhookUrl: monitorWebhookUrl,
      ignoreSelectors,
      name: name.optional(),
      paused: paused.optional(),
      ...monitorCaptureFields,
    })
    .strict()
    .superRefine((options, ctx) => checkCrossFieldRules({ ...options, format: 'png', returnFile: true } as never, ctx)),
  { title: 'CreateMonitorRequest' },
);
export type CreateMonitorBody = z.output<typeof CreateMonitorBodySchema>;
export type CreateMonitorInput = z.input<typeof CreateMonitorBodySchema>;

/** `PATCH /monitors/{id}`: any field of a monitor; null clears webhookUrl, ignoreSelectors or a capture option. */
export const UpdateMonitorBodySchema = withOpenApi(
  z
    .object({
      url: captureFields.url.unwrap().optional().describe('The page to watch.'),
      intervalSeconds: intervalSeconds.optional(),
      threshold: threshold.optional(),
      webhookUrl: monitorWebhookUrl.nullable(),
      ignoreSelectors: ignoreSelectors.nullable(),
      name: name.optional(),
      paused: paused.optional(),
      ...Object.fromEntries(Object.entries(monitorCaptureFields).map(([field, schema]) => [field, (schema as z.ZodTypeAny).nullable()])),
    })
    .strict(),
  { title: 'UpdateMonitorRequest' },
);
export type UpdateMonitorBody = z.output<typeof UpdateMonitorBodySchema>;

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

const ok = <T extends z.ZodTypeAny>(data: T, title: string) => withOpenApi(z.object({ success: z.literal(true), data }), { title });
export const MonitorResponseSchema = ok(MonitorSchema, 'MonitorResponse');
export const MonitorListSchema = ok(z.object({ monitors: z.array(MonitorSchema) }), 'MonitorList');
export const MonitorRunListSchema = ok(
  z.object({ runs: z.array(MonitorRunSchema).describe('Newest first'), nextCursor: z.string().nullable() }),
  'MonitorRunList',
);
export const MonitorRunResponseSchema = ok(MonitorRunSchema, 'MonitorRunResponse');

export const MonitorRunsQuerySchema = z
  .object({
    apiKey: z.string().optional().describe('API key; may instead be sent in header X-API-Key.'),
    limit: z
      .preprocess(
        fromDecimalText,
        z
          .number({ errorMap: () => ({ message: 'limit must be a whole number from 1 to 100' }) })
          .int('limit must be a whole number from 1 to 100')
          .min(1, 'limit must be a whole number from 1 to 100')
          .max(100, 'limit must be a whole number from 1 to 100'),
      )
      .default(20)
      .describe('Runs per page. Default: 20.'),
    cursor: z.string().max(200, 'cursor must be at most 200 characters').optional().describe('The nextCursor of the previous page.'),
  })
  .strict();

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

/** The events a monitor's webhook receives. */
export const MONITOR_EVENT_TYPES = ['monitor.changed', 'monitor.failed', 'monitor.paused', 'monitor.resumed'] as const;
export type MonitorEventType = (typeof MONITOR_EVENT_TYPES)[number];

export interface MonitorWebhookEvent {
  type: MonitorEventType;
  timestamp: string;
  data: {
    monitorId: string;
    name: string;
    url: string;
    run?: MonitorRun;
    /** monitor.changed: the new, baseline and diff images. */
    images?: { newUrl: string | null; baselineUrl: string | null; diffUrl: string | null };
    /** monitor.paused / monitor.resumed. */
    reason?: string;
  };
}

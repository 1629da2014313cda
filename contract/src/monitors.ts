import { z } from 'zod';
import { captureFields, checkCrossFieldRules } from './capture.js';
import { webhookUrlField } from './jobs.js';
import { withOpenApi } from './openapi-meta.js';
import { fromDecimalText, listParam } from './params.js';

/**
 * Monitors: a page captured on a schedule and compared with its baseline (the previous run, or a
 * run pinned as golden), in pixels and in words; a signed webhook when it changed past the
 * threshold or when a run failed. And `POST /diff`, the same comparison once (diff.ts).
 *
 * This module holds the requests that create, change and page through monitors; what the routes
 * answer is in monitor-responses.ts, the webhook's events in monitor-webhook-events.ts.
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

export const monitorCaptureFields = Object.fromEntries(MONITOR_CAPTURE_FIELDS.map((name) => [name, captureFields[name]])) as Pick<
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
export const threshold = z
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

export const ignoreSelectors = listParam(
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

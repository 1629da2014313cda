import { z } from 'zod';
import { captureDeliveryFields } from './capture-delivery-fields.js';
import { captureOutputFields } from './capture-output-fields.js';
import { captureViewportFields } from './capture-viewport-fields.js';
import { captureWaitFields } from './capture-wait-fields.js';
import { contentFilterFields } from './content-filter-fields.js';
import { customHeadersParam } from './custom-headers.js';
import { resolveDevice } from './devices.js';
import { httpUrl } from './http-url-param.js';
import { LIMITS } from './limits.js';
import { pageActionFields } from './page-actions.js';
import { pageControlFields } from './page-control-fields.js';
import { PAGINATED_ONLY_PDF_FIELDS } from './pdf-options.js';
import { withOpenApi } from './openapi-meta.js';
import { booleanParam, optionalNumberParam, stringParam } from './params.js';
import { pageInsightFields } from './page-insight.js';
import { signedLinkFields } from './signed-link-fields.js';
import { checkSyncVideoRules, checkVideoRules } from './video-options.js';

/** The capture request: every parameter of `GET /capture` in one object, the rules between them, the query and body schemas. */

/** Issues carrying this param are reported as MISSING_REQUIRED_FIELD rather than VALIDATION_ERROR. */
export const MISSING_FIELD_PARAM = { errorCode: 'MISSING_REQUIRED_FIELD' } as const;

/**
 * Every parameter of `GET /capture` (spec, "GET /capture"), exactly as its tables say. `apiKey` is
 * listed so that it is documented and accepted; authentication reads it before validation.
 */
export const captureFields = {
  url: httpUrl('url', LIMITS.urlMaxLength)
    .optional()
    .describe('Web page address to capture (URL mode). Exactly one of url or html is required.'),
  html: z
    .string({ errorMap: () => ({ message: 'html must be a string' }) })
    .min(1, 'html must not be empty')
    .max(
      LIMITS.htmlMaxLength,
      `html must be at most ${LIMITS.htmlMaxLength} characters (use POST /capture with a JSON body for large documents up to the same limit)`,
    )
    .optional()
    .describe(
      `Inline HTML markup to render (HTML mode), URL-encoded; at most ${LIMITS.htmlMaxLength} characters. Exactly one of url or html is required.`,
    ),
  apiKey: z.string().optional().describe('API key; may instead be sent in header X-API-Key.'),

  // The key order is the order of the parameters in openapi.json and docs/reference/api.md, so each
  // group is spread at its place in that order.
  ...captureOutputFields,
  ...captureViewportFields,
  ...captureWaitFields,
  ...contentFilterFields,
  ...pageControlFields,

  ...pageActionFields,

  failOnHttpError: booleanParam(
    'failOnHttpError',
    false,
    'true: when the main document answers 4xx or 5xx, the capture fails with 502 TARGET_HTTP_ERROR (details.status) and nothing is charged.',
  ),

  omitBackground: booleanParam('omitBackground', false, 'true: a transparent background where the page sets none; png and webp only.'),

  // A CR/LF/NUL in a user agent broke the browser (500) instead of being refused.
  userAgent: z
    .string({ errorMap: () => ({ message: 'userAgent must be a string' }) })
    .min(1, 'userAgent must not be empty')
    .max(1_024, 'userAgent must be at most 1024 characters')
    // eslint-disable-next-line no-control-regex
    .regex(/^[^\u0000-\u001f\u007f]*$/, 'userAgent must not contain control characters (CR, LF, NUL or similar): printable text only')
    .optional()
    .describe('Overrides the preset user agent. Kept for logging.'),
  headers: customHeadersParam,

  openaiPrompt: stringParam(
    'openaiPrompt',
    LIMITS.openaiPromptMaxLength,
    'Prompt used to analyze the produced image. Needs a provider key too.',
  ),
  openaiApiKey: stringParam('openaiApiKey', 1_024, 'Analysis-provider key (query fallback; prefer header X-OpenAI-Api-Key). Never stored.'),

  ...pageInsightFields,

  latitude: optionalNumberParam('latitude', { min: -90, max: 90 }, 'Emulated latitude, -90 to 90; requires longitude.'),
  longitude: optionalNumberParam('longitude', { min: -180, max: 180 }, 'Emulated longitude, -180 to 180; requires latitude.'),

  proxyUrl: httpUrl('proxyUrl', 2_048).optional().describe('HTTP(S) proxy for this capture, e.g. http://proxy.example:8080.'),
  proxyUsername: stringParam('proxyUsername', 1_024, 'Proxy user name.'),
  proxyPassword: stringParam('proxyPassword', 1_024, 'Proxy password. Never stored or logged.'),

  ...captureDeliveryFields,
};

export const captureObject = z.object(captureFields).strict();
const captureQueryObject = z.object({ ...captureFields, ...signedLinkFields }).strict();
export type RawCaptureOptions = z.output<typeof captureObject>;

function issue(ctx: z.RefinementCtx, field: string, message: string, params?: Record<string, string>) {
  ctx.addIssue({ code: z.ZodIssueCode.custom, path: [field], message, ...(params ? { params } : {}) });
}

function viewportValuesInRange(width: unknown, height: unknown, scale: unknown): boolean {
  const within = (value: unknown, min: number, max: number) => typeof value === 'number' && value >= min && value <= max;
  return (
    within(width, LIMITS.viewportMin, LIMITS.viewportMax) &&
    within(height, LIMITS.viewportMin, LIMITS.viewportMax) &&
    within(scale, LIMITS.scaleFactorMin, LIMITS.scaleFactorMax)
  );
}

/** Rules that span several parameters (spec, "Rules" and the per-table notes). */
export function checkCrossFieldRules(options: RawCaptureOptions, ctx: z.RefinementCtx) {
  if (options.url !== undefined && options.html !== undefined) {
    issue(ctx, 'url', 'give exactly one of url or html, not both');
    issue(ctx, 'html', 'give exactly one of url or html, not both');
  } else if (options.url === undefined && options.html === undefined) {
    issue(ctx, 'url', 'one of url or html is required');
    issue(ctx, 'html', 'one of url or html is required');
  }
  if ((options.latitude === undefined) !== (options.longitude === undefined)) {
    const missing = options.latitude === undefined ? 'latitude' : 'longitude';
    issue(ctx, missing, 'latitude and longitude must be given together');
  }
  if ((options.proxyUsername !== undefined || options.proxyPassword !== undefined) && options.proxyUrl === undefined) {
    issue(ctx, 'proxyUrl', 'proxyUrl is required when proxyUsername or proxyPassword is given');
  }
  // The provider-key rule (prompt and key together) is checked with the header, server-side: the key
  // may travel as header X-OpenAI-Api-Key, which this schema does not see.
  if (options.requestStorageEnabled) {
    for (const field of [
      'requestStorageEndpoint',
      'requestStorageAccessKeyId',
      'requestStorageSecretAccessKey',
      'requestStorageBucket',
    ] as const) {
      if (options[field] === undefined) issue(ctx, field, `${field} is required when requestStorageEnabled is true`, MISSING_FIELD_PARAM);
    }
  }
  if (options.locale !== undefined && Object.keys(options.headers ?? {}).some((name) => name.toLowerCase() === 'accept-language')) {
    // Chromium's locale override replaces a custom Accept-Language, so one of the two would be ignored silently.
    issue(ctx, 'locale', 'give the language once: either locale or an Accept-Language entry in headers, not both');
  }
  if (options.openaiSchema !== undefined && options.openaiPrompt === undefined) {
    issue(ctx, 'openaiSchema', 'openaiSchema needs openaiPrompt (the schema shapes the answer to that prompt)');
  }
  if (options.format === 'mhtml' && options.clipSelector !== undefined) {
    issue(
      ctx,
      'clipSelector',
      'clipSelector does not apply to format mhtml (a snapshot of the whole page): leave it out, or use html, text or markdown',
    );
  }
  if (options.omitBackground && options.format !== 'png' && options.format !== 'webp') {
    issue(ctx, 'omitBackground', 'omitBackground needs format png or webp');
  }
  if (options.format === 'pdf' && options.pdfPageLayout === 'single') {
    for (const field of PAGINATED_ONLY_PDF_FIELDS) {
      if (options[field] !== undefined)
        issue(ctx, field, `${field} applies to the paginated pdf layout; leave it out or use pdfPageLayout=paginated`);
    }
  }
  if (options.scrollIntoView !== undefined && (options.fullPage || options.format === 'pdf')) {
    // A full-page capture shows the whole document whatever the scroll position.
    issue(
      ctx,
      'scrollIntoView',
      'scrollIntoView applies to viewport captures: leave out fullPage (and format pdf, which is always full page) or scrollIntoView',
    );
  }
  checkVideoRules(options, ctx);
  const preset = resolveDevice(options.device);
  const width = options.viewportWidth ?? preset.width;
  const height = options.viewportHeight ?? preset.height;
  const scale = options.scaleFactor ?? preset.scale;
  const pixels = Math.round(width * scale) * Math.round(height * scale);
  // A value already refused for its own range (viewportWidth=99999) is reported once, on its own field.
  if (pixels > LIMITS.maxViewportPixels && viewportValuesInRange(width, height, scale)) {
    issue(
      ctx,
      'scaleFactor',
      `viewport × scaleFactor gives ${Math.round(width * scale)}×${Math.round(height * scale)} pixels; at most ${LIMITS.maxViewportPixels} pixels (7680×4320) are allowed`,
    );
  }
}

/** For pdf the service always captures the whole page with the default scroll (spec, "Format and output"). */
export function applyPdfOverrides<T extends RawCaptureOptions>(options: T): T {
  if (options.format !== 'pdf') return options;
  return { ...options, fullPage: true, fullPageScroll: true, fullPageScrollDuration: 1000 };
}

export const CaptureQuerySchema = captureQueryObject
  .superRefine(checkCrossFieldRules)
  .superRefine(checkSyncVideoRules)
  .transform(applyPdfOverrides);
export const CaptureBodySchema = withOpenApi(
  captureObject.superRefine(checkCrossFieldRules).superRefine(checkSyncVideoRules).transform(applyPdfOverrides),
  { title: 'CaptureRequest' },
);

/** Capture options after validation, defaults and the pdf overrides. */
export type CaptureOptions = z.output<typeof CaptureQuerySchema>;
/** What a caller may send (query strings or JSON values). */
export type CaptureInput = z.input<typeof captureObject>;

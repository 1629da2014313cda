import { z } from 'zod';
import { customHeadersParam } from './custom-headers.js';
import { DEVICE_NAMES, resolveDevice } from './devices.js';
import { LIMITS } from './limits.js';
import { pageActionFields } from './page-actions.js';
import { PAGINATED_ONLY_PDF_FIELDS, pdfFields } from './pdf-options.js';
import { withOpenApi } from './openapi-meta.js';
import { booleanParam, enumParam, listParam, numberParam, optionalNumberParam, stringParam } from './params.js';
import { CaptureQualitySchema, CONTENT_FORMATS, CONTENT_MIME_TYPES, PageMetadataSchema, pageInsightFields } from './page-insight.js';

export const IMAGE_FORMATS = ['png', 'webp', 'jpeg'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];
/** Images, pdf, the page's content (html, markdown, text, mhtml) and scrolling video (mp4, webm, gif). */
export const FORMATS = [...IMAGE_FORMATS, 'pdf', ...CONTENT_FORMATS, ...VIDEO_FORMATS] as const;
import { checkSyncVideoRules, checkVideoRules, VIDEO_FORMATS, VIDEO_MIME_TYPES, videoFields } from './video-options.js';
export type CaptureFormat = (typeof FORMATS)[number];
export const PDF_PAGE_LAYOUTS = ['paginated', 'single'] as const;
export const THEMES = ['light', 'dark', 'auto'] as const;
export const WAIT_UNTIL = ['load', 'domcontentloaded', 'networkidle0', 'networkidle2'] as const;
export const MEDIA_TYPES = ['screen', 'print'] as const;
export const BLOCKABLE_RESOURCES = ['stylesheet', 'script', 'image', 'font', 'media'] as const;

export const MIME_TYPES: Record<CaptureFormat, string> = {
  png: 'image/png',
  webp: 'image/webp',
  jpeg: 'image/jpeg',
  pdf: 'application/pdf',
  ...CONTENT_MIME_TYPES,
  ...VIDEO_MIME_TYPES,
};

/** Issues carrying this param are reported as MISSING_REQUIRED_FIELD rather than VALIDATION_ERROR. */
export const MISSING_FIELD_PARAM = { errorCode: 'MISSING_REQUIRED_FIELD' } as const;

const httpUrl = (field: string, max: number) =>
  z
    .string({ errorMap: () => ({ message: `${field} must be a string` }) })
    .max(max, `${field} must be at most ${max} characters`)
    .refine((value) => {
      try {
        const parsed = new URL(value);
        return parsed.protocol === 'http:' || parsed.protocol === 'https:';
      } catch {
        return false;
      }
    }, `${field} must be an absolute http:// or https:// URL`);

const blockedResource = z.enum(BLOCKABLE_RESOURCES, {
  errorMap: () => ({ message: `blockResources entries must be from: ${BLOCKABLE_RESOURCES.join(', ')}` }),
});
const selector = z.string().max(LIMITS.selectorMaxLength, `selectors must be at most ${LIMITS.selectorMaxLength} characters`);
const urlPattern = z.string().max(LIMITS.urlMaxLength, `blockUrls entries must be at most ${LIMITS.urlMaxLength} characters`);

function isKnownTimezone(value: string): boolean {
  if (value === 'UTC') return true;
  return Intl.supportedValuesOf('timeZone').includes(value);
}

function isBcp47(value: string): boolean {
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

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

  format: enumParam(
    'format',
    FORMATS,
    'png',
    "Output format: an image (png, webp, jpeg), pdf, or the page's content: html (the DOM after scripts), markdown (the main content: Readability's article, or Defuddle's or the main landmark's when Readability's is mostly links or much shorter than the page's main text), text (the visible text) or mhtml (Chromium's snapshot archive); or a scrolling video: mp4, webm or gif (videoDuration, videoFps, scrollEasing).",
  ),
  pdfPageLayout: enumParam(
    'pdfPageLayout',
    PDF_PAGE_LAYOUTS,
    'paginated',
    'paginated: multi-page A4 with margins (pdfFormat, pdfMargin and the other pdf* options change that); single: one continuous page sized to the document height (viewport height when not full page). Ignored unless format is pdf.',
  ),
  ...pdfFields,
  ...videoFields,
  returnFile: booleanParam('returnFile', true, 'true: binary file; false: JSON with base64 data.'),
  imageQuality: numberParam(
    'imageQuality',
    { min: LIMITS.imageQualityMin, max: LIMITS.imageQualityMax },
    90,
    'Quality 1 to 100; for jpeg and webp.',
  ),
  scaleFactor: optionalNumberParam(
    'scaleFactor',
    { min: LIMITS.scaleFactorMin, max: LIMITS.scaleFactorMax },
    'Device scale factor 0.1 to 3.0; overrides the preset scale.',
    1,
  ),

  device: enumParam(
    'device',
    DEVICE_NAMES,
    'desktop',
    'A device ID or legacy category (desktop, mobile, tablet). A specific device sets viewport, scale factor and user agent.',
  ),
  viewportWidth: optionalNumberParam(
    'viewportWidth',
    { min: LIMITS.viewportMin, max: LIMITS.viewportMax, unit: 'pixels' },
    'Viewport width in CSS pixels; overrides the preset width.',
    1920,
  ),
  viewportHeight: optionalNumberParam(
    'viewportHeight',
    { min: LIMITS.viewportMin, max: LIMITS.viewportMax, unit: 'pixels' },
    'Viewport height in CSS pixels; overrides the preset height.',
    1080,
  ),
  theme: enumParam('theme', THEMES, 'auto', 'Emulated prefers-color-scheme: light, dark or auto (the page decides).'),

  fullPage: booleanParam('fullPage', false, 'Capture the whole page including below the fold; ignored for pdf (always true).'),
  fullPageScroll: booleanParam(
    'fullPageScroll',
    false,
    'Scroll through the page first so lazy-loaded content loads, at a fixed pace; a growing page (infinite list) is scrolled until its height stays the same, fullPageScrollDuration passes or the full-page height budget is reached (data.page.stillGrowing says when it was still growing); ignored for pdf (always true).',
  ),
  fullPageScrollDuration: numberParam(
    'fullPageScrollDuration',
    { min: 0, max: LIMITS.scrollDurationMaxMs, unit: 'ms' },
    1000,
    'Longest time to scroll, in ms (a page that stops growing ends sooner; a longer duration never loads less); ignored for pdf (always 1000).',
  ),
  clipSelector: stringParam('clipSelector', LIMITS.selectorMaxLength, 'CSS selector; capture only that element.'),

  delay: numberParam('delay', { min: 0, max: LIMITS.delayMaxMs, unit: 'ms' }, 0, 'Milliseconds to wait before capture.'),
  waitUntil: enumParam('waitUntil', WAIT_UNTIL, 'load', 'Navigation event to wait for.'),
  waitForSelector: stringParam('waitForSelector', LIMITS.selectorMaxLength, 'CSS selector to wait for before capture.'),
  failOnWaitTimeout: booleanParam(
    'failOnWaitTimeout',
    false,
    'false (best attempt): when waitUntil is not reached within its budget but the page has rendered, the page is captured as it is, marked X-Capture-Wait-Timed-Out: true and data.page.waitTimedOut, and charged. true: such a capture fails with 504 CAPTURE_TIMEOUT instead, and nothing is charged.',
  ),

  removeAds: booleanParam('removeAds', false, 'Remove ads.'),
  removeCookieBanners: booleanParam('removeCookieBanners', false, 'Remove cookie consent banners.'),
  removeSelectors: listParam('removeSelectors', selector, LIMITS.listMaxEntries, 'Comma-separated CSS selectors of elements to remove.'),
  blockResources: listParam(
    'blockResources',
    blockedResource,
    BLOCKABLE_RESOURCES.length,
    `Comma-separated resource types to block, from: ${BLOCKABLE_RESOURCES.join(', ')}.`,
  ),
  blockUrls: listParam(
    'blockUrls',
    urlPattern,
    LIMITS.listMaxEntries,
    'Comma-separated URLs or patterns to block; * matches any characters.',
  ),

  hideSelectors: listParam(
    'hideSelectors',
    selector,
    LIMITS.listMaxEntries,
    'Comma-separated CSS selectors of elements to hide (visibility: hidden; the layout is kept).',
  ),
  styles: stringParam('styles', 100_000, 'CSS text added to the page before capture.'),
  timezone: z
    .string({ errorMap: () => ({ message: 'timezone must be a string' }) })
    .refine(isKnownTimezone, 'timezone must be an IANA time zone name the runtime knows, e.g. Europe/Paris or UTC')
    .optional()
    .describe("IANA time zone the page sees, e.g. Europe/Paris. Default: the server's time zone."),
  locale: z
    .string({ errorMap: () => ({ message: 'locale must be a string' }) })
    .max(64, 'locale must be at most 64 characters')
    .refine(isBcp47, 'locale must be a BCP 47 language tag, e.g. en-US or fr-FR')
    .optional()
    .describe("BCP 47 locale: sets navigator.language and the Accept-Language header. Default: the browser's own (en-US)."),

  mediaType: z
    .enum(MEDIA_TYPES, { errorMap: () => ({ message: `mediaType must be one of: ${MEDIA_TYPES.join(', ')}` }) })
    .optional()
    .describe("Emulated CSS media type: screen or print. Default: none (the page's own, screen for images)."),
  reducedMotion: booleanParam(
    'reducedMotion',
    false,
    'true: the page sees prefers-reduced-motion: reduce; running CSS transitions and animations and finite Web Animations jump to their end state before capture, endless ones stop, and known carousels (Swiper, Slick, Bootstrap, Splide, Flickity) stop their autoplay.',
  ),

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

  cacheEnabled: booleanParam('cacheEnabled', false, 'Enable response caching.'),
  cacheTtl: numberParam(
    'cacheTtl',
    { min: LIMITS.cacheTtlMinSeconds, max: LIMITS.cacheTtlMaxSeconds, unit: 'seconds' },
    3600,
    'Cache lifetime in seconds.',
  ),

  requestStorageEnabled: booleanParam(
    'requestStorageEnabled',
    false,
    'Upload the result to the S3-compatible storage given by the requestStorage* parameters.',
  ),
  requestStorageEndpoint: httpUrl('requestStorageEndpoint', 2_048).optional().describe('S3-compatible endpoint URL.'),
  requestStorageAccessKeyId: stringParam('requestStorageAccessKeyId', 256, 'Access key ID.'),
  requestStorageSecretAccessKey: stringParam('requestStorageSecretAccessKey', 1_024, 'Secret access key. Never stored or logged.'),
  requestStorageBucket: stringParam('requestStorageBucket', 255, 'Bucket name.'),
  requestStorageRegion: z
    .string({ errorMap: () => ({ message: 'requestStorageRegion must be a string' }) })
    .min(1, 'requestStorageRegion must not be empty')
    .max(64, 'requestStorageRegion must be at most 64 characters')
    .default('us-east-1')
    .describe('Region. Default: us-east-1.'),
};

/**
 * A signed link's parameters (GET only): they authenticate the request in place of `apiKey`, are
 * checked before validation and never reach the capture options, the cache key or the ledger.
 */
export const signedLinkFields = {
  keyId: z
    .string()
    .max(64, 'keyId must be at most 64 characters')
    .optional()
    .describe('Signed links: the id of the API key whose signing secret signed the link (instead of apiKey).'),
  expires: z
    .string()
    .regex(/^\d{1,12}$/, 'expires must be whole unix seconds')
    .optional()
    .describe('Signed links: unix time in seconds after which the link is refused (SIGNED_LINK_EXPIRED). Optional.'),
  signature: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'signature must be 64 lowercase hex characters')
    .optional()
    .describe(
      'Signed links: the last parameter; lowercase hex HMAC-SHA256, keyed with the signing secret, of the query string as sent before &signature=.',
    ),
};
export const SIGNED_LINK_FIELDS = ['keyId', 'expires', 'signature'] as const;

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

/**
 * Ranges and limits decided here once so that validation, the server and the docs agree. Each is
 * documented in the "Limits" table of docs/using-the-api.md.
 */
export const LIMITS = {
  /** Decoded characters of inline `html` (GET or POST). */
  htmlMaxLength: 100_000,
  urlMaxLength: 8_192,
  viewportMin: 100,
  viewportMax: 7_680,
  /** Output pixels (viewport width × height × scale²) of one viewport capture: 8K, 33.2 MP. */
  maxViewportPixels: 7_680 * 4_320,
  imageQualityMin: 1,
  imageQualityMax: 100,
  scaleFactorMin: 0.1,
  scaleFactorMax: 3,
  delayMaxMs: 30_000,
  scrollDurationMaxMs: 30_000,
  cacheTtlMinSeconds: 1,
  cacheTtlMaxSeconds: 2_592_000,
  maxCustomHeaders: 20,
  headerValueMaxLength: 8_192,
  selectorMaxLength: 1_024,
  listMaxEntries: 50,
  openaiPromptMaxLength: 4_000,
  /** Characters of `scripts` (GET or POST), as for `styles`. */
  scriptMaxLength: 100_000,
} as const;

/** Header names a caller may not set (spec, "Custom request"). Compared case-insensitively. */
export const BLOCKED_HEADER_NAMES = [
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'keep-alive',
  'te',
  'trailer',
  'proxy-authorization',
  'proxy-connection',
] as const;

import { VIDEO_LIMITS, fromDecimalText } from '@daguerre/contract';
import { z } from 'zod';
import { parseEncryptionKey } from './security/secret-box.js';
import { defaultChromiumPath } from './chromium-binaries.js';
import { isSecretName, maskUserinfo } from './security/redaction.js';
import { adoptLegacyDataFile } from './legacy-names.js';
import { defaultConcurrency, defaultVideoConcurrency } from './default-concurrency.js';

const booleanFlag = (name: string) =>
  z
    .enum(['true', 'false', '1', '0'], { errorMap: () => ({ message: `${name} must be true or false` }) })
    .default('false')
    .transform((value) => value === 'true' || value === '1');

/** An origin exactly as a browser sends it in `Origin`: scheme://host[:port], nothing more. */
function isOrigin(entry: string): boolean {
  try {
    const url = new URL(entry);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === entry;
  } catch {
    return false;
  }
}

// Decimal text only (fromDecimalText): "0x10" is not sixteen slots.
const wholeNumber = (name: string, min: number, max: number) =>
  z.preprocess(
    fromDecimalText,
    z
      .number({ errorMap: () => ({ message: `${name} must be a whole number from ${min} to ${max}` }) })
      .int(`${name} must be a whole number from ${min} to ${max}`)
      .min(min, `${name} must be a whole number from ${min} to ${max}`)
      .max(max, `${name} must be a whole number from ${min} to ${max}`),
  );
const integer = (name: string, min: number, max: number, fallback: number) => wholeNumber(name, min, max).default(fallback);

/** A comma-separated list, empty when unset, each entry trimmed and checked by `valid`. */
const commaList = (valid: (entry: string) => boolean, message: string) =>
  z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .refine((entries) => entries.every(valid), message);

/** Every setting of the service, its default and its check. The README's configuration table mirrors this. */
export const ConfigSchema = z.object({
  PORT: integer('PORT', 0, 65_535, 3000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .default('sqlite:./data/daguerre.db')
    .refine((value) => /^(sqlite:.+|mysql:\/\/.+)$/.test(value), 'DATABASE_URL must be sqlite:<path> or mysql://user:pass@host:port/db'),
  REDIS_URL: z.string().url('REDIS_URL must be a redis:// URL').optional(),
  // The headless shell when installed (chromium-binaries.ts says why), else Debian's full browser.
  CHROME_PATH: z.string().default(defaultChromiumPath()),
  // Unset: from the cores and the memory, once the renderer memory limit is known (loadConfig).
  MAX_CONCURRENCY: wholeNumber('MAX_CONCURRENCY', 1, 64).optional(),
  MAX_QUEUE: integer('MAX_QUEUE', 0, 10_000, 32),
  // When set, /metrics needs `Authorization: Bearer <token>`: without it /metrics is public on the API port.
  METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
  // When set, /metrics is served only on this port (bound to METRICS_HOST), not on the API port.
  METRICS_PORT: wholeNumber('METRICS_PORT', 0, 65_535).optional(),
  METRICS_HOST: z.string().default('127.0.0.1'),
  // Videos recorded at once (capture/pool/capture-lanes.ts). Unset: a video for every two CPUs, at least one, fewer than MAX_CONCURRENCY (loadConfig).
  VIDEO_CONCURRENCY: wholeNumber('VIDEO_CONCURRENCY', 1, 64).optional(),
  // Share of the capture slots one organization may hold while others wait (docs/render-slots.md); 100 turns it off.
  MAX_ORG_SHARE_PERCENT: integer('MAX_ORG_SHARE_PERCENT', 1, 100, 50),
  CAPTURE_TIMEOUT_MS: integer('CAPTURE_TIMEOUT_MS', 1_000, 600_000, 30_000),
  // A page whose main thread does not answer this long is ended: 504 PAGE_UNRESPONSIVE, its slot freed (docs/render-slots.md); 0 turns the watchdog off.
  PAGE_UNRESPONSIVE_TIMEOUT_MS: integer('PAGE_UNRESPONSIVE_TIMEOUT_MS', 0, 600_000, 4_000),
  // Captures one organization may have rendering or waiting for a slot on one instance, unless its plan sets its own; 0: MAX_CONCURRENCY + MAX_QUEUE.
  ORG_MAX_CONCURRENT_CAPTURES: integer('ORG_MAX_CONCURRENT_CAPTURES', 0, 10_000, 0),
  // The full-page budget (docs/capture-fidelity.md): png/jpeg full pages and clipSelector elements past it are cut and say X-Capture-Truncated: true.
  FULL_PAGE_MAX_HEIGHT_PX: integer('FULL_PAGE_MAX_HEIGHT_PX', 1_000, 1_000_000, 100_000),
  FULL_PAGE_MAX_PIXELS: integer('FULL_PAGE_MAX_PIXELS', 1_000_000, 2_000_000_000, 192_000_000),
  BROWSER_RECYCLE_AFTER: integer('BROWSER_RECYCLE_AFTER', 1, 1_000_000, 500),
  CONTEXT_REUSE_LIMIT: integer('CONTEXT_REUSE_LIMIT', 1, 10_000, 50),
  // Fresh contexts kept ready for a capture whose slot served another organization (docs/security.md).
  SPARE_CONTEXTS: integer('SPARE_CONTEXTS', 0, 64, 1),
  // Captures a kept renderer serves before the reset starts a new one for its context.
  RENDERER_REUSE_LIMIT: integer('RENDERER_REUSE_LIMIT', 1, 10_000, 100),
  // Captures between two full garbage collections of a kept renderer (it grows ~6 MB a capture without).
  RENDERER_GC_EVERY: integer('RENDERER_GC_EVERY', 1, 10_000, 10),
  // Warm contexts kept for the organizations that used them last, busy ones included (docs/security.md: one organization per renderer).
  // Unset: twice MAX_CONCURRENCY, at least 4 (loadConfig).
  WARM_CONTEXTS: wholeNumber('WARM_CONTEXTS', 1, 256).optional(),
  ALLOW_PRIVATE_NETWORK: booleanFlag('ALLOW_PRIVATE_NETWORK'),
  EGRESS_ALLOW_LIST: commaList(
    (entry) => /^(\[[0-9a-f:.]+\]|[^:\s]+):\d+$/i.test(entry),
    'EGRESS_ALLOW_LIST must be comma-separated host:port entries',
  ),
  TRUST_PROXY: booleanFlag('TRUST_PROXY'),
  REQUIRE_HTTPS: booleanFlag('REQUIRE_HTTPS'),
  RATE_LIMIT_MAX: integer('RATE_LIMIT_MAX', 1, 1_000_000, 40),
  RATE_LIMIT_WINDOW_MS: integer('RATE_LIMIT_WINDOW_MS', 1_000, 86_400_000, 60_000),
  CREDITS_PER_CAPTURE: integer('CREDITS_PER_CAPTURE', 1, 1_000, 1),
  DEMO_CREDITS: integer('DEMO_CREDITS', 0, 100_000_000, 1_000),
  // Where `serve` writes the demo key (mode 0600) instead of printing it: printed, it ends up in journals and container logs.
  DEMO_KEY_FILE: z.string().min(1).default('./data/demo-api-key.txt'),
  OPENAI_BASE_URL: z.string().url('OPENAI_BASE_URL must be a URL').optional(),
  OPENAI_MODEL: z.string().default('gpt-4o-mini'),
  OPENAI_TIMEOUT_MS: integer('OPENAI_TIMEOUT_MS', 1_000, 600_000, 30_000),
  /** Bytes of rendered files the in-process response cache may hold; 0 turns the cache off. */
  CACHE_MAX_BYTES: integer('CACHE_MAX_BYTES', 0, 64 * 1024 ** 3, 256 * 1024 ** 2),
  STORAGE_ENCRYPTION_KEY: z
    .string()
    .refine(
      (value) => parseEncryptionKey(value) !== undefined,
      'STORAGE_ENCRYPTION_KEY must be 32 bytes written as 64 hex characters or as base64 (e.g. the output of `openssl rand -base64 32`)',
    )
    .optional(),
  /** Encrypts API keys' signing secrets at rest; unset: a key file created in the data folder on first start. */
  SIGNING_SECRETS_KEY: z
    .string()
    .refine(
      (value) => parseEncryptionKey(value) !== undefined,
      'SIGNING_SECRETS_KEY must be 32 bytes written as 64 hex characters or as base64 (e.g. the output of `openssl rand -base64 32`)',
    )
    .optional(),
  STORAGE_CONNECT_TIMEOUT_MS: integer('STORAGE_CONNECT_TIMEOUT_MS', 100, 120_000, 5_000),
  STORAGE_REQUEST_TIMEOUT_MS: integer('STORAGE_REQUEST_TIMEOUT_MS', 1_000, 600_000, 20_000),
  SHUTDOWN_TIMEOUT_MS: integer('SHUTDOWN_TIMEOUT_MS', 0, 600_000, 20_000),
  /** A reservation older than CAPTURE_TIMEOUT_MS plus this is released by the sweeper. */
  STALE_RESERVATION_MARGIN_MS: integer('STALE_RESERVATION_MARGIN_MS', 1_000, 3_600_000, 15_000),
  CREDIT_SWEEP_INTERVAL_MS: integer('CREDIT_SWEEP_INTERVAL_MS', 500, 3_600_000, 10_000),
  REQUEST_LOG_RETENTION_DAYS: integer('REQUEST_LOG_RETENTION_DAYS', 1, 3_650, 30),
  REQUEST_LOG_REFUSALS_PER_MINUTE: integer('REQUEST_LOG_REFUSALS_PER_MINUTE', 0, 100_000, 60),
  REQUEST_LOG_SWEEP_INTERVAL_MS: integer('REQUEST_LOG_SWEEP_INTERVAL_MS', 1_000, 86_400_000, 3_600_000),
  /** V8 heap cap of each renderer (MiB): a page past it crashes alone instead of taking the host's memory. */
  RENDERER_MAX_HEAP_MB: integer('RENDERER_MAX_HEAP_MB', 64, 65_536, 512),
  /**
   * All the memory one Chromium renderer may use (MiB, proportional set size: JS heap, ArrayBuffers,
   * canvases, images, raster and shared memory); past it the renderer is ended and the capture
   * answers 422 PAGE_MEMORY_LIMIT (docs/containment.md). 1024 fits a 2-core, 4 GB host: two captures at the
   * limit plus Chromium's own processes and the service stay under 3 GB.
   */
  RENDERER_MEMORY_LIMIT_MB: integer('RENDERER_MEMORY_LIMIT_MB', 128, 1_048_576, 1024),
  // Opt-out of Chromium's sandbox where the kernel forbids user namespaces (docs/security.md); logged at every start, shown in /ready.
  ALLOW_UNSANDBOXED_CHROMIUM: booleanFlag('ALLOW_UNSANDBOXED_CHROMIUM'),
  /** Async captures (POST /captures): jobs this process renders at once; 0 = API only (`serve`). */
  CAPTURE_WORKERS: integer('CAPTURE_WORKERS', 0, 64, 2),
  /** Port of a `daguerre worker` process's /health, /ready and /metrics. */
  WORKER_PORT: integer('WORKER_PORT', 0, 65_535, 3001),
  /** Key prefix of the BullMQ queues and Redis (several deployments may share one Redis). */
  JOB_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'JOB_QUEUE_PREFIX must be 1-64 letters, digits or _ . : -')
    .default('daguerre'),
  /** How long finished jobs and their files stay available (GET /captures/{id} and /file). */
  JOB_RESULT_TTL_SECONDS: integer('JOB_RESULT_TTL_SECONDS', 60, 30 * 86_400, 86_400),
  /** A worker that stops renewing its job's lock this long (killed, frozen) loses the job to another worker. */
  JOB_LOCK_MS: integer('JOB_LOCK_MS', 2_000, 600_000, 30_000),
  /** Webhook deliveries: the first retry waits this long; later ones wait 5, 15, 30 and 60 times as long. */
  WEBHOOK_RETRY_BASE_MS: integer('WEBHOOK_RETRY_BASE_MS', 10, 3_600_000, 60_000),
  /** A total deadline per delivery attempt (connect, headers and body), not an idle timeout. */
  WEBHOOK_TIMEOUT_MS: integer('WEBHOOK_TIMEOUT_MS', 100, 120_000, 10_000),
  /** Webhook deliveries one process makes at once, and how many of them one organization may hold (docs/async-jobs.md, "Webhooks"). */
  WEBHOOK_CONCURRENCY: integer('WEBHOOK_CONCURRENCY', 1, 256, 16),
  WEBHOOK_MAX_PER_ORGANIZATION: integer('WEBHOOK_MAX_PER_ORGANIZATION', 1, 256, 4),
  /** Attempts of an async job whose worker stopped (killed, lost) before the job fails, charging nothing. */
  JOB_MAX_ATTEMPTS: integer('JOB_MAX_ATTEMPTS', 1, 20, 3),
  /** Files of finished async jobs (docs/async-jobs.md): this directory unless RESULTS_S3_BUCKET names the deployment's bucket. */
  RESULTS_DIR: z.string().min(1).default('./data/results'),
  RESULTS_S3_ENDPOINT: z.string().url('RESULTS_S3_ENDPOINT must be a URL such as https://s3.eu-west-1.amazonaws.com').optional(),
  RESULTS_S3_BUCKET: z.string().min(1).optional(),
  RESULTS_S3_REGION: z.string().min(1).default('us-east-1'),
  RESULTS_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  RESULTS_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  RESULTS_S3_PREFIX: z.string().default('daguerre-results/'),
  RESULTS_S3_PATH_STYLE: booleanFlag('RESULTS_S3_PATH_STYLE').default('true'),
  /** How often each process deletes files and records of jobs past JOB_RESULT_TTL_SECONDS. */
  RESULT_SWEEP_INTERVAL_MS: integer('RESULT_SWEEP_INTERVAL_MS', 1_000, 86_400_000, 60_000),
  /** Monitors (docs/monitors.md): the shortest intervalSeconds a monitor may have. */
  MONITOR_MIN_INTERVAL_SECONDS: integer('MONITOR_MIN_INTERVAL_SECONDS', 1, 86_400, 60),
  /** Monitors an organization may have when its plan sets no number (plans.max_monitors). */
  MONITORS_PER_ORGANIZATION: integer('MONITORS_PER_ORGANIZATION', 0, 1_000_000, 20),
  /** Runs kept per monitor besides its golden run; older runs and their images are deleted. */
  MONITOR_RUNS_KEPT: integer('MONITOR_RUNS_KEPT', 1, 100_000, 100),
  /** Monitor runs this process makes at once (0: none here), and how many of them one organization may hold. */
  MONITOR_WORKERS: integer('MONITOR_WORKERS', 0, 64, 2),
  MONITOR_MAX_PER_ORGANIZATION: integer('MONITOR_MAX_PER_ORGANIZATION', 1, 64, 1),
  /** How often each process rebuilds the monitors' schedules from the database and resumes monitors whose credits came back. */
  MONITOR_RECONCILE_INTERVAL_MS: integer('MONITOR_RECONCILE_INTERVAL_MS', 200, 3_600_000, 30_000),
  /** The ffmpeg binary that encodes scrolling videos (formats mp4, webm, gif; Debian's ffmpeg package). */
  FFMPEG_PATH: z.string().min(1).default('ffmpeg'),
  /** Largest video file; a video that passes it fails uncharged. At most the documented maximum, 64 MiB. */
  VIDEO_MAX_BYTES: integer('VIDEO_MAX_BYTES', 1_024, VIDEO_LIMITS.maxOutputBytes, VIDEO_LIMITS.maxOutputBytes),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** MCP `capture`: images up to this many bytes go back inline (MCP image content), text up to half of it, larger files as a link (docs/mcp.md). */
  MCP_INLINE_MAX_BYTES: integer('MCP_INLINE_MAX_BYTES', 1_024, 7 * 1_024 * 1_024, 1_000_000),
  /** MCP `capture`: the longest side, in pixels, of an image that goes back inline (the Claude API refuses more than 8000). */
  MCP_INLINE_MAX_SIDE_PX: integer('MCP_INLINE_MAX_SIDE_PX', 16, 16_384, 8_000),
  /** /mcp: browser origins allowed besides the service's own (the MCP transport rules ask servers to check Origin; docs/mcp.md). */
  MCP_ALLOWED_ORIGINS: commaList(
    isOrigin,
    'MCP_ALLOWED_ORIGINS must be comma-separated origins such as https://app.example.com (scheme, host and port only: no path, no trailing slash, no *)',
  ),
  /** `daguerre mcp`: the service to talk to and the API key (or --url and --api-key). */
  DAGUERRE_URL: z.string().url('DAGUERRE_URL must be the service address, e.g. https://capture.example.com').optional(),
  DAGUERRE_API_KEY: z.string().min(1).optional(),
});

const CheckedConfigSchema = ConfigSchema.superRefine((config, ctx) => {
  if (config.RESULTS_S3_BUCKET && !(config.RESULTS_S3_ENDPOINT && config.RESULTS_S3_ACCESS_KEY_ID && config.RESULTS_S3_SECRET_ACCESS_KEY)) {
    ctx.addIssue({
      code: 'custom',
      path: ['RESULTS_S3_BUCKET'],
      message: 'RESULTS_S3_BUCKET needs RESULTS_S3_ENDPOINT, RESULTS_S3_ACCESS_KEY_ID and RESULTS_S3_SECRET_ACCESS_KEY too',
    });
  }
});

export type Config = Omit<z.infer<typeof ConfigSchema>, 'MAX_CONCURRENCY' | 'WARM_CONTEXTS' | 'VIDEO_CONCURRENCY'> & {
  MAX_CONCURRENCY: number;
  WARM_CONTEXTS: number;
  VIDEO_CONCURRENCY: number;
};

/**
 * Settings whose value never appears in an error message: those that may carry credentials, and
 * any whose name says key, token, secret or password (a METRICS_TOKEN refused as too short is still a secret).
 */
const SECRET_SETTINGS = new Set(['DATABASE_URL', 'REDIS_URL', 'OPENAI_BASE_URL']);
const hiddenSetting = (name: string) => SECRET_SETTINGS.has(name) || isSecretName(name);

export class ConfigError extends Error {}

/** Parses the environment once; a bad value stops start-up with a message naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Record<keyof Config, string>> = {}): Config {
  const source: Record<string, string | undefined> = {};
  for (const key of Object.keys(ConfigSchema.shape)) {
    const value = overrides[key as keyof Config] ?? env[key];
    source[key] = value === '' ? undefined : value;
  }
  const parsed = CheckedConfigSchema.safeParse(source);
  if (!parsed.success) {
    const shown = (name: string) => (hiddenSetting(name) ? '(value hidden)' : `(got ${JSON.stringify(maskUserinfo(source[name] ?? ''))})`);
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message} ${shown(String(i.path[0]))}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const slots = parsed.data.MAX_CONCURRENCY ?? defaultConcurrency(parsed.data.RENDERER_MEMORY_LIMIT_MB);
  // Room for every slot's context and as many kept for the organizations that come back: with
  // several organizations taking turns on every slot, fewer made the pool close and open a context
  // (a new renderer, about 1 CPU-s) for most captures (docs/performance.md).
  const config = {
    ...parsed.data,
    MAX_CONCURRENCY: slots,
    WARM_CONTEXTS: parsed.data.WARM_CONTEXTS ?? Math.min(256, Math.max(4, 2 * slots)),
    VIDEO_CONCURRENCY: parsed.data.VIDEO_CONCURRENCY ?? defaultVideoConcurrency(slots),
  };
  // A deployment from before the rename keeps its data file (legacy-names.ts).
  const adopted = adoptLegacyDataFile(config, { DATABASE_URL: source.DATABASE_URL });
  if (adopted.notice) NOTICES.set(adopted.config, [adopted.notice]);
  return adopted.config;
}

/** Lines to log once at start-up about how the configuration was read (an old name adopted). */
const NOTICES = new WeakMap<Config, string[]>();
export function configNotices(config: Config): string[] {
  return NOTICES.get(config) ?? [];
}

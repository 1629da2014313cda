import type { Config } from './config.js';

/**
 * What each setting means, for the generated configuration reference (`npm run docs`). Defaults and
 * ranges are read from the schema in config.ts; `default` here only replaces a default that depends
 * on the machine. A setting added to the schema without a line here is a compile error.
 */
export const CONFIG_DOCS: Record<keyof Config, { meaning: string; default?: string }> = {
  PORT: { meaning: 'HTTP port of the API and dashboard.' },
  HOST: { meaning: 'Listen address.' },
  DATABASE_URL: { meaning: '`sqlite:<path>` (embedded) or `mysql://user:pass@host:port/db` (MySQL/MariaDB; needed for several instances).' },
  REDIS_URL: { meaning: 'Redis for the queue of async captures (`POST /captures`) and the shared rate-limit window (else the database, else memory).' },
  CHROME_PATH: {
    meaning: 'The Chromium to drive. The headless shell is the same release without the desktop browser around it, and faster; the full browser works too.',
    default: '`/usr/lib/chromium/chromium-headless-shell` when installed, else `/usr/bin/chromium`',
  },
  MAX_CONCURRENCY: { meaning: 'Captures rendered at once by this process (warm browser contexts in use).', default: 'the CPU count, at least 2' },
  MAX_QUEUE: { meaning: 'Captures allowed to wait for a slot; past it 503 with `Retry-After`.' },
  METRICS_TOKEN: { meaning: 'When set (16 characters or more), `/metrics` answers only `Authorization: Bearer <token>`. Set it whenever the API port is public.' },
  METRICS_PORT: { meaning: 'When set, `/metrics` is served only on this port (bound to `METRICS_HOST`), not on the API port.' },
  METRICS_HOST: { meaning: 'Listen address of `METRICS_PORT`.' },
  MAX_ORG_SHARE_PERCENT: {
    meaning: 'Share of the render slots one organization may hold while another organization below its share waits (a plan may set its own). `100` turns the share off.',
  },
  CAPTURE_TIMEOUT_MS: { meaning: "Deadline of one capture, queue time included; a request's own `delay` and full-page scroll duration are added (at most 60 s more)." },
  FULL_PAGE_MAX_HEIGHT_PX: { meaning: 'Tallest `fullPage` or `clipSelector` image in device pixels; past it the image is cut and says `X-Capture-Truncated: true`.' },
  FULL_PAGE_MAX_PIXELS: { meaning: 'Largest `fullPage` or `clipSelector` image in device pixels (width × height); a wide page is cut shorter to stay within it.' },
  BROWSER_RECYCLE_AFTER: { meaning: 'Relaunch Chromium after this many captures.' },
  CONTEXT_REUSE_LIMIT: { meaning: 'Replace a warm browser context after this many captures.' },
  SPARE_CONTEXTS: { meaning: 'Fresh browser contexts kept ready for an organization that has no warm context (each holds an idle renderer of 20–60 MB).' },
  RENDERER_REUSE_LIMIT: { meaning: 'Give a warm context a new renderer process after this many captures (a kept renderer grows by about 6 MB a capture).' },
  WARM_CONTEXTS: { meaning: 'Warm contexts kept for the organizations that used them last, busy ones included (at least `MAX_CONCURRENCY`).' },
  ALLOW_PRIVATE_NETWORK: { meaning: 'Lift the private-address checks of the egress policy (trusted networks and local development only).' },
  EGRESS_ALLOW_LIST: { meaning: 'Comma-separated `host:port` destinations allowed although private (an intranet service).' },
  TRUST_PROXY: { meaning: 'Trust `X-Forwarded-*` from a TLS-terminating proxy.' },
  REQUIRE_HTTPS: { meaning: 'Refuse requests that did not arrive over HTTPS (400 `HTTPS_REQUIRED`).' },
  RATE_LIMIT_MAX: { meaning: 'Default capture requests per window and organization (a plan may set its own).' },
  RATE_LIMIT_WINDOW_MS: { meaning: 'Length of the default rate-limit window.' },
  CREDITS_PER_CAPTURE: { meaning: 'Credits one successful capture costs.' },
  DEMO_CREDITS: { meaning: 'Credits of the demo organization and of the default `Starter` plan.' },
  DEMO_KEY_FILE: { meaning: 'Where a start on a new database writes the demo key (mode 0600); the key itself is never printed.' },
  OPENAI_BASE_URL: { meaning: 'OpenAI-compatible API used for AI analysis (operator setting, never per request).', default: '`https://api.openai.com/v1` (the SDK\'s own)' },
  OPENAI_MODEL: { meaning: 'Model used for AI analysis.' },
  OPENAI_TIMEOUT_MS: { meaning: 'Time limit of one AI analysis call.' },
  CACHE_MAX_BYTES: { meaning: 'Bytes of rendered files the in-process response cache may hold; `0` turns caching off.' },
  STORAGE_ENCRYPTION_KEY: { meaning: ' 32 bytes (64 hex characters or base64) encrypting storage credentials at rest; without it storage configurations cannot be created or read.'.trim() },
  SIGNING_SECRETS_KEY: {
    meaning: "32 bytes (64 hex characters or base64) encrypting API keys' signing secrets at rest. Set it in production and share it between instances.",
    default: 'a `signing-secrets.key` file (0600) created in the data folder on first start',
  },
  STORAGE_CONNECT_TIMEOUT_MS: { meaning: 'Connect time limit of S3 uploads.' },
  STORAGE_REQUEST_TIMEOUT_MS: { meaning: 'Request time limit of S3 uploads.' },
  SHUTDOWN_TIMEOUT_MS: { meaning: 'Grace period of in-flight captures on SIGTERM/SIGINT.' },
  STALE_RESERVATION_MARGIN_MS: { meaning: 'A credit reservation whose capture deadline ended longer ago than this is released by the sweeper.' },
  CREDIT_SWEEP_INTERVAL_MS: { meaning: 'How often each instance sweeps stale credit reservations.' },
  RENDERER_MAX_HEAP_MB: { meaning: 'JavaScript heap cap of each Chromium renderer; a page past it crashes alone (500, nothing charged).' },
  ALLOW_UNSANDBOXED_CHROMIUM: {
    meaning: "Run Chromium with `--no-sandbox` where the kernel forbids unprivileged user namespaces (otherwise the service refuses to start); logged at every start and shown in `/ready`.",
  },
  CAPTURE_WORKERS: { meaning: 'Async jobs this process renders at once; `0`: `serve` takes requests only (`rendershot worker` renders at least 1).' },
  WORKER_PORT: { meaning: 'Port of the `/health`, `/ready` and `/metrics` of a `rendershot worker`.' },
  JOB_QUEUE_PREFIX: { meaning: 'Key prefix of the job queues in Redis (several deployments may share one Redis).' },
  JOB_RESULT_TTL_SECONDS: { meaning: 'How long finished jobs and their files are kept.' },
  JOB_LOCK_MS: { meaning: "A worker that stops renewing its job's lock this long (killed, frozen) loses the job to another worker." },
  WEBHOOK_RETRY_BASE_MS: { meaning: 'Unit of the webhook retry schedule (1, 5, 15, 30 and 60 units).' },
  WEBHOOK_TIMEOUT_MS: { meaning: 'Time a webhook receiver has to answer.' },
  LOG_LEVEL: { meaning: 'pino log level.' },
};

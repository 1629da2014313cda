import type { Config } from './config.js';

/**
 * What each setting means, for the generated configuration reference (`npm run docs`). Defaults and
 * ranges are read from the schema in config.ts; `default` here only replaces a default that depends
 * on the machine. A setting added to the schema without a line here is a compile error.
 */
export const CONFIG_DOCS: Record<keyof Config, { meaning: string; default?: string }> = {
  PORT: { meaning: 'HTTP port of the API and dashboard.' },
  HOST: { meaning: 'Listen address.' },
  DATABASE_URL: {
    meaning: '`sqlite:<path>` (embedded) or `mysql://user:pass@host:port/db` (MySQL/MariaDB; needed for several instances).',
  },
  REDIS_URL: {
    meaning: 'Redis for the queue of async captures (`POST /captures`) and the shared rate-limit window (else the database, else memory).',
  },
  CHROME_PATH: {
    meaning:
      'The Chromium to drive. The headless shell is the same release without the desktop browser around it, and faster; the full browser works too.',
    default: '`/usr/lib/chromium/chromium-headless-shell` when installed, else `/usr/bin/chromium`',
  },
  MAX_CONCURRENCY: {
    meaning: 'Captures rendered at once by this process (warm browser contexts in use).',
    default:
      "two a CPU, as many as fit in half the memory at `RENDERER_MEMORY_LIMIT_MB` each, at least 2 and at most 64 (CPUs and memory as the process's cgroup allows: a container's quota and limit, a systemd unit's `MemoryMax`)",
  },
  MAX_QUEUE: { meaning: 'Captures allowed to wait for a slot; past it 503 with `Retry-After`.' },
  METRICS_TOKEN: {
    meaning:
      'When set (16 characters or more), `/metrics` answers only `Authorization: Bearer <token>`. Set it whenever the API port is public.',
  },
  METRICS_PORT: { meaning: 'When set, `/metrics` is served only on this port (bound to `METRICS_HOST`), not on the API port.' },
  METRICS_HOST: { meaning: 'Listen address of `METRICS_PORT`.' },
  VIDEO_CONCURRENCY: {
    meaning:
      "Videos (mp4, webm, gif) recorded at once by this process; each also takes a render slot. An organization records at most its share of them (`MAX_ORG_SHARE_PERCENT` or its plan's), and a synchronous video this instance cannot finish within its request is refused at once with 503 and `Retry-After` (docs/video.md).",
    default: 'one for every two CPUs, at least 1, fewer than `MAX_CONCURRENCY` when that is 2 or more',
  },
  MAX_ORG_SHARE_PERCENT: {
    meaning:
      'Share of the render slots one organization may hold while another organization below its share waits (a plan may set its own). `100` turns the share off.',
  },
  PAGE_UNRESPONSIVE_TIMEOUT_MS: {
    meaning:
      'A page whose main thread does not answer for this long is ended and the capture fails with 504 `PAGE_UNRESPONSIVE`, nothing charged; `0` turns the watchdog off.',
  },
  ORG_MAX_CONCURRENT_CAPTURES: {
    meaning:
      'Default number of captures one organization may have in progress on an instance (a plan may set its own); past it a sync capture gets 429 `CONCURRENCY_LIMIT_EXCEEDED` and an async job waits. `0`: `MAX_CONCURRENCY` + `MAX_QUEUE`.',
  },
  CAPTURE_TIMEOUT_MS: {
    meaning:
      "Deadline of one capture, queue time included; a request's own `delay`, full-page scroll duration and video length are added. On a busy instance a video's recording may go on past that deadline, until `CAPTURE_TIMEOUT_MS` + 140 s (+ 420 s for an async capture): docs/video.md.",
  },
  FULL_PAGE_MAX_HEIGHT_PX: {
    meaning: 'Tallest `fullPage` or `clipSelector` image in device pixels; past it the image is cut and says `X-Capture-Truncated: true`.',
  },
  FULL_PAGE_MAX_PIXELS: {
    meaning: 'Largest `fullPage` or `clipSelector` image in device pixels (width × height); a wide page is cut shorter to stay within it.',
  },
  BROWSER_RECYCLE_AFTER: { meaning: 'Relaunch Chromium after this many captures.' },
  CONTEXT_REUSE_LIMIT: { meaning: 'Replace a warm browser context after this many captures.' },
  SPARE_CONTEXTS: {
    meaning:
      'Fresh browser contexts kept ready for an organization that has no warm context (each holds an idle renderer of 20–60 MB). A start opens one a render slot; those past this number are closed once nothing has rendered for a second.',
  },
  RENDERER_REUSE_LIMIT: { meaning: 'Give a warm context a new renderer process after this many captures.' },
  RENDERER_GC_EVERY: {
    meaning:
      "Run a full garbage collection in a warm context's renderer after this many captures, between two captures (without it a kept renderer grows by about 6 MB a capture).",
  },
  WARM_CONTEXTS: {
    meaning: 'Warm contexts kept for the organizations that used them last, busy ones included (at least `MAX_CONCURRENCY`).',
    default: 'twice `MAX_CONCURRENCY`, at least 4',
  },
  ALLOW_PRIVATE_NETWORK: { meaning: 'Lift the private-address checks of the egress policy (trusted networks and local development only).' },
  EGRESS_ALLOW_LIST: { meaning: 'Comma-separated `host:port` destinations allowed although private (an intranet service).' },
  TRUST_PROXY: { meaning: 'Trust `X-Forwarded-*` from a TLS-terminating proxy.' },
  REQUIRE_HTTPS: { meaning: 'Refuse requests that did not arrive over HTTPS (400 `HTTPS_REQUIRED`).' },
  RATE_LIMIT_MAX: { meaning: 'Default capture requests per window and organization (a plan may set its own).' },
  RATE_LIMIT_WINDOW_MS: { meaning: 'Length of the default rate-limit window.' },
  CREDITS_PER_CAPTURE: { meaning: 'Credits one successful capture costs.' },
  DEMO_CREDITS: { meaning: 'Credits of the demo organization and of the default `Starter` plan.' },
  DEMO_KEY_FILE: { meaning: 'Where a start on a new database writes the demo key (mode 0600); the key itself is never printed.' },
  OPENAI_BASE_URL: {
    meaning: 'OpenAI-compatible API used for AI analysis (operator setting, never per request).',
    default: "`https://api.openai.com/v1` (the SDK's own)",
  },
  OPENAI_MODEL: { meaning: 'Model used for AI analysis.' },
  OPENAI_TIMEOUT_MS: { meaning: 'Time limit of one AI analysis call.' },
  CACHE_MAX_BYTES: { meaning: 'Bytes of rendered files the in-process response cache may hold; `0` turns caching off.' },
  STORAGE_ENCRYPTION_KEY: {
    meaning:
      ' 32 bytes (64 hex characters or base64) encrypting storage credentials at rest; without it storage configurations cannot be created or read.'.trim(),
  },
  SIGNING_SECRETS_KEY: {
    meaning:
      "32 bytes (64 hex characters or base64) encrypting API keys' signing secrets at rest. Set it in production and share it between instances.",
    default: 'a `signing-secrets.key` file (0600) created in the data folder on first start',
  },
  STORAGE_CONNECT_TIMEOUT_MS: { meaning: 'Connect time limit of S3 uploads.' },
  STORAGE_REQUEST_TIMEOUT_MS: { meaning: 'Request time limit of S3 uploads.' },
  SHUTDOWN_TIMEOUT_MS: { meaning: 'Grace period of in-flight captures on SIGTERM/SIGINT.' },
  STALE_RESERVATION_MARGIN_MS: {
    meaning: 'A credit reservation whose capture deadline ended longer ago than this is released by the sweeper.',
  },
  CREDIT_SWEEP_INTERVAL_MS: { meaning: 'How often each instance sweeps stale credit reservations.' },
  REQUEST_LOG_RETENTION_DAYS: {
    meaning:
      "Days the request log (`GET /captures`, the dashboard's Request log and its per-day usage) keeps each capture; older rows are deleted.",
  },
  REQUEST_LOG_REFUSALS_PER_MINUTE: {
    meaning:
      'Refused captures (bad input, the rate limit, no credits) written to the request log per API key and minute on each instance; a flood beyond it is answered but not logged, so it cannot turn into database writes.',
  },
  REQUEST_LOG_SWEEP_INTERVAL_MS: { meaning: 'How often each instance deletes request-log rows older than `REQUEST_LOG_RETENTION_DAYS`.' },
  RENDERER_MEMORY_LIMIT_MB: {
    meaning:
      'All the memory (PSS) one Chromium process may use; past it the renderer is ended and the capture answers 422 `PAGE_MEMORY_LIMIT`, nothing charged. Enforced by a memory cgroup where the kernel offers one, and by a watchdog always.',
  },
  RENDERER_MAX_HEAP_MB: { meaning: 'JavaScript heap cap of each Chromium renderer; a page past it crashes alone (500, nothing charged).' },
  ALLOW_UNSANDBOXED_CHROMIUM: {
    meaning:
      'Run Chromium with `--no-sandbox` where the kernel forbids unprivileged user namespaces (otherwise the service refuses to start); logged at every start and shown in `/ready`.',
  },
  CAPTURE_WORKERS: {
    meaning: 'Async jobs this process renders at once; `0`: `serve` takes requests only (`daguerre worker` renders at least 1).',
  },
  WORKER_PORT: { meaning: 'Port of the `/health`, `/ready` and `/metrics` of a `daguerre worker`.' },
  JOB_QUEUE_PREFIX: {
    meaning: 'Key prefix of the job queue in Redis (several deployments may share one Redis); Redis holds the queue only.',
  },
  JOB_RESULT_TTL_SECONDS: { meaning: 'How long finished job records and their files are kept.' },
  JOB_LOCK_MS: { meaning: "A worker that stops renewing its job's lock this long (killed, frozen) loses the job to another worker." },
  WEBHOOK_RETRY_BASE_MS: { meaning: 'Unit of the webhook retry schedule (1, 5, 15, 30 and 60 units).' },
  WEBHOOK_TIMEOUT_MS: { meaning: 'Total deadline of one webhook attempt: connect, headers and body.' },
  WEBHOOK_CONCURRENCY: { meaning: 'Webhook deliveries one process makes at once.' },
  WEBHOOK_MAX_PER_ORGANIZATION: {
    meaning:
      "How many of those deliveries one organization's receivers may hold, so slow receivers cannot delay another organization's webhooks.",
  },
  JOB_MAX_ATTEMPTS: { meaning: 'Claims of a job whose worker stopped (killed, lost) before the job fails, charging nothing.' },
  RESULTS_DIR: { meaning: 'Folder of the files of finished async jobs, unless `RESULTS_S3_BUCKET` is set (then unused).' },
  RESULTS_S3_ENDPOINT: {
    meaning:
      "Endpoint of the deployment's S3-compatible bucket for async results (needed when API instances and workers run on different hosts).",
  },
  RESULTS_S3_BUCKET: { meaning: 'That bucket; needs the endpoint and both credentials.' },
  RESULTS_S3_REGION: { meaning: "That bucket's region." },
  RESULTS_S3_ACCESS_KEY_ID: { meaning: 'Access key id for the results bucket. Never printed.' },
  RESULTS_S3_SECRET_ACCESS_KEY: { meaning: 'Secret access key for the results bucket. Never printed.' },
  RESULTS_S3_PREFIX: { meaning: 'Key prefix of result files in the bucket (give it a lifecycle rule as a second sweeper).' },
  RESULTS_S3_PATH_STYLE: { meaning: 'Path-style bucket addressing (most S3-compatible servers want it).' },
  RESULT_SWEEP_INTERVAL_MS: { meaning: 'How often each process deletes job records and files past `JOB_RESULT_TTL_SECONDS`.' },
  MONITOR_MIN_INTERVAL_SECONDS: {
    meaning: 'Shortest `intervalSeconds` of a monitor (docs/monitors.md); a shorter one is refused with 400 naming the field.',
  },
  MONITORS_PER_ORGANIZATION: {
    meaning:
      'Monitors an organization may have when its plan sets no number of its own; past it `POST /monitors` answers 403 `QUOTA_EXCEEDED`.',
  },
  MONITOR_RUNS_KEPT: { meaning: 'Runs kept per monitor besides its golden run; older runs and their images are deleted after each run.' },
  MONITOR_WORKERS: {
    meaning:
      'Monitor runs this process makes at once (each is a capture through the same browser); `0`: this process runs none. Needs `REDIS_URL`.',
  },
  MONITOR_MAX_PER_ORGANIZATION: {
    meaning: "Of those, how many one organization's monitors may hold, so an organization with many monitors cannot delay another's runs.",
  },
  MONITOR_RECONCILE_INTERVAL_MS: {
    meaning:
      "How often each process rebuilds the monitors' schedules in Redis from the database (after a Redis restarted empty) and resumes monitors paused for credits when credits came back.",
  },
  MCP_INLINE_MAX_BYTES: {
    meaning:
      'Bytes of a tool result the MCP `capture` and `get_capture` tools return inline: an image (png, jpeg, webp) up to this size as image content, an html, markdown or text capture up to half of it as text (it also travels in `structuredContent`); anything larger, and every pdf, mhtml and video, comes back as a link.',
  },
  MCP_INLINE_MAX_SIDE_PX: { meaning: 'Longest side of an image the MCP `capture` tool returns inline.' },
  MCP_ALLOWED_ORIGINS: {
    meaning:
      "Comma-separated browser origins (`https://app.example.com`) allowed to call `/mcp` besides the service's own; a request with any other `Origin` gets 403 (DNS-rebinding protection the MCP transport asks for). Requests without `Origin` (MCP hosts, SDKs) are not affected.",
  },
  DAGUERRE_URL: { meaning: 'Address of the service that `daguerre mcp` (stdio) talks to; `--url` wins.' },
  DAGUERRE_API_KEY: { meaning: 'API key `daguerre mcp` (stdio) sends; `--api-key` wins. Never printed.' },
  FFMPEG_PATH: { meaning: "The ffmpeg binary that encodes scrolling videos (Debian's `ffmpeg`, installed by the setup)." },
  VIDEO_MAX_BYTES: {
    meaning:
      'Largest video file; a video that would pass it is refused up front with 400 where it can be known, else when the encoder reaches it (nothing charged). May only be lowered.',
  },
  LOG_LEVEL: { meaning: 'pino log level.' },
};

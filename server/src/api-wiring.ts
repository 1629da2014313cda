import type { Express } from 'express';
import type { Config } from './config.js';
import { mountDashboard } from './dashboard/index.js';
import { createApp } from './http/app.js';
import { InFlight } from './http/capture-routes.js';
import { CaptureRateLimiter, type RateLimitStore } from './http/rate-limit.js';
import { resultFiles, type JobsRuntime } from './jobs/start-jobs.js';
import { DiffImages } from './monitors/diff-images.js';
import { OneOffDiff } from './monitors/one-off-diff.js';
import type { MonitorsRuntime } from './monitors/start-monitors.js';
import type { Metrics } from './ops/metrics.js';
import { assertUrlAllowed } from './security/target-policy.js';
import type { CaptureService } from './services/capture-service.js';
import type { CaptureSubmission } from './services/capture-submission.js';
import type { DataLayer } from './services/data-layer.js';
import type { RequestLog } from './services/request-log.js';
import type { Logger } from 'pino';

/** What the API side is built from: the parts runtime.ts has already started. */
export interface ApiParts {
  config: Config;
  data: DataLayer;
  logger: Logger;
  metrics: Metrics;
  captures: CaptureService;
  submission: CaptureSubmission;
  requestLog: RequestLog;
  jobs: JobsRuntime;
  monitors: MonitorsRuntime | undefined;
  rateLimitStore: RateLimitStore;
  /** Aborted when a shutdown's grace period ends. */
  shutdownSignal: AbortSignal;
  /** /health, /ready and /metrics. */
  mountOps: (app: Express) => void;
}

/**
 * The API of `daguerre serve`: the contract's routes, POST /diff, /mcp, the dashboard and the
 * docs on one Express app. runtime.ts loads this module only for `serve`, so a render worker
 * never loads the API's modules and starts sooner (docs/scaling.md, "Cold start").
 */
export function buildApiApp(parts: ApiParts): { app: Express; inFlight: InFlight } {
  const { config, data, logger, jobs, monitors, captures } = parts;
  const inFlight = new InFlight();
  const checkDestination = (field: string, url: string) => assertUrlAllowed(data.policy, data.resolve, field, url);
  // POST /diff: its images go to the result store of async jobs (a local directory without Redis too).
  const diffImages = new DiffImages(resultFiles(config), { ttlSeconds: config.JOB_RESULT_TTL_SECONDS });
  const oneOffDiff = new OneOffDiff({
    captures,
    credits: data.credits,
    creditsPerCapture: config.CREDITS_PER_CAPTURE,
    jobs: jobs.jobs,
    // {runId} sides: the monitors core's MonitorRunImages (one-off-diff.ts); undefined without REDIS_URL.
    runImages: monitors?.runImages,
    images: diffImages,
    checkDestination,
  });
  const app = createApp({
    metrics: parts.metrics,
    shutdownSignal: parts.shutdownSignal,
    inFlight,
    creditsPerCapture: config.CREDITS_PER_CAPTURE,
    jobRoutes: {
      jobs: jobs.jobs,
      withdrawal: jobs.withdrawal,
      batches: jobs.batches,
      webhooks: jobs.webhooks,
      submissions: parts.submission.withQueues({ jobs: jobs.jobs, batches: jobs.batches }),
    },
    monitorRoutes: { monitors: monitors?.service },
    diffRoutes: { diffs: oneOffDiff, images: diffImages },
    extraRoutes: (expressApp) => {
      parts.mountOps(expressApp);
      mountDashboard(expressApp, { data, logger, config, jobs: { ...jobs, monitors } });
    },
    apiKeys: data.apiKeys,
    captures,
    usage: data.usage,
    requestLog: parts.requestLog,
    rateLimiter: new CaptureRateLimiter(parts.rateLimitStore, data.plans),
    logger,
    trustProxy: config.TRUST_PROXY,
    requireHttps: config.REQUIRE_HTTPS,
    mcpBudget: { maxBytes: config.MCP_INLINE_MAX_BYTES, maxSidePx: config.MCP_INLINE_MAX_SIDE_PX },
    mcpAllowedOrigins: config.MCP_ALLOWED_ORIGINS,
  });
  return { app, inFlight };
}

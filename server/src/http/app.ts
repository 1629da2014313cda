import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { contract } from '@daguerre/contract';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import swaggerUi from 'swagger-ui-express';
import { ApiError } from '../errors.js';
import type { ApiKeyService } from '../services/api-keys.js';
import type { CaptureService } from '../services/capture-service.js';
import type { UsageService } from '../services/usage-service.js';
import type { Metrics } from '../ops/metrics.js';
import { captureMetrics } from './capture-metrics.js';
import { jsonBody } from './json-body.js';
import { requestLogger } from './request-logger.js';
import { captureHandler, type InFlight } from './capture-routes.js';
import { errorResponder, sendError } from './error-responder.js';
import type { CaptureRateLimiter } from './rate-limit.js';
import { routePolicy } from './route-policy.js';
import { usageHandler } from './usage-routes.js';
import { requestLogHandler } from './request-log-routes.js';
import type { RequestLog } from '../services/request-log.js';
import { docsPageOptions } from './docs-page.js';
import { jobHandlers, type JobRouteDependencies } from './job-routes.js';
import type { InlineBudget } from '../mcp/delivery.js';
import { lazyRouter } from './lazy-router.js';
import { bulkHandlers, type BulkRouteDependencies } from './bulk-routes.js';
import { webhookHandlers, type WebhookRouteDependencies } from './webhook-routes.js';
import { monitorHandlers, type MonitorRouteDependencies } from './monitor-routes.js';
import { openApiDocumentPath } from '../package-files.js';
import { diffBodyFields, diffHandlers, type DiffRouteDependencies } from './diff-routes.js';

export interface AppDependencies {
  metrics: Metrics;
  /** Aborted when a shutdown's grace period ends. */
  shutdownSignal?: AbortSignal;
  inFlight?: InFlight;
  creditsPerCapture: number;
  apiKeys: ApiKeyService;
  captures: CaptureService;
  usage: UsageService;
  /** The request log: GET /captures, and the refusals it records. */
  requestLog: RequestLog;
  rateLimiter: CaptureRateLimiter;
  logger: Logger;
  trustProxy: boolean;
  requireHttps: boolean;
  /** Async captures (POST /captures); `jobs` is undefined without REDIS_URL. */
  jobRoutes: JobRouteDependencies & Pick<BulkRouteDependencies, 'batches'> & WebhookRouteDependencies;
  /** Monitors (docs/monitors.md); undefined without REDIS_URL like `jobs`. */
  monitorRoutes?: MonitorRouteDependencies;
  /** POST /diff and the images of its diffs (docs/monitors.md). */
  diffRoutes: DiffRouteDependencies;
  /** The MCP face at /mcp (docs/mcp.md): what an inline image may weigh. */
  mcpBudget: InlineBudget;
  /** Browser origins allowed on /mcp besides the service's own (MCP_ALLOWED_ORIGINS). */
  mcpAllowedOrigins?: readonly string[];
  /** Extra routes (health, metrics, dashboard) mounted before the API. */
  extraRoutes?: (app: Express) => void;
}

/** Composes the Express app: the contract's routes plus docs, and one error responder. */
export function createApp(deps: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.trustProxy);
  // Plain key=value parsing: no nested objects from a[b]=c in a capture query.
  app.set('query parser', 'simple');

  app.use((req, res, next) => {
    const requestId = randomUUID();
    res.locals.daguerre = { requestId };
    res.setHeader('X-Request-Id', requestId);
    next();
  });
  app.use(requestLogger(deps.logger));
  // Before the JSON parser: /mcp reads its own body, so that every refusal there is JSON-RPC (docs/mcp.md).
  // Its module (the MCP SDK, the client) is loaded at the first /mcp request: about 15 MiB otherwise held idle.
  app.use(
    '/mcp',
    lazyRouter(async () =>
      (await import('../mcp/http-endpoint.js')).mcpEndpoint({
        apiKeys: deps.apiKeys,
        requireHttps: deps.requireHttps,
        trustProxy: deps.trustProxy,
        allowedOrigins: deps.mcpAllowedOrigins ?? [],
        budget: deps.mcpBudget,
        logger: deps.logger,
      }),
    ),
  );
  // Size and nesting limits before anything parses or walks the body (docs/containment.md, "JSON bodies").
  app.use(jsonBody());

  const openapi = JSON.parse(readFileSync(openApiDocumentPath(), 'utf8')) as object;
  app.get('/openapi.json', (_req, res) => res.json(openapi));
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(openapi, docsPageOptions()));
  deps.extraRoutes?.(app);

  const capture = captureHandler(deps.captures, deps.shutdownSignal, deps.inFlight);
  const s = initServer();
  // HEAD never renders and never charges (docs/async-jobs.md): Express would run the GET handler for it, and
  // a link previewer probing a signed link would pay for a capture it never receives. Answered
  // before authentication and the rate limit, so a probe costs nothing at all.
  app.head('/capture', (_req, res) => {
    res.setHeader('Allow', 'GET, POST');
    sendError(
      res,
      new ApiError('INVALID_INPUT', 'HEAD is not supported on /capture: a capture is rendered and charged only for GET or POST', {
        status: 405,
      }),
    );
  });
  // Every sync capture request is counted, refusals included (ops metrics, not access policy).
  app.use('/capture', captureMetrics(deps.metrics, deps.creditsPerCapture));
  // Order of the request pipeline (docs/architecture.md): authenticate, throttle, then the contract's
  // validation. Each route's authentication, rate limit and refusal logging come from its
  // declaration in the contract (route-policy.ts).
  app.use(
    routePolicy({
      apiKeys: deps.apiKeys,
      requireHttps: deps.requireHttps,
      rateLimiter: deps.rateLimiter,
      requestLog: deps.requestLog,
      logger: deps.logger,
    }),
  );
  const jobs = jobHandlers(deps.jobRoutes);
  const bulk = bulkHandlers(deps.jobRoutes);
  const webhooks = webhookHandlers(deps.jobRoutes);
  const monitors = monitorHandlers(deps.monitorRoutes ?? { monitors: undefined });
  const diffs = diffHandlers(deps.diffRoutes, deps.shutdownSignal, deps.inFlight);
  const providerKey = (headers: { 'x-openai-api-key'?: string | undefined }) =>
    headers['x-openai-api-key'] ? { providerKeyHeader: headers['x-openai-api-key'] } : {};
  const router = s.router(contract, {
    capture: ({ query, headers, req, res }) => capture({ options: query, ...providerKey(headers), req, res }),
    captureWithBody: ({ body, headers, req, res }) => capture({ options: body, ...providerKey(headers), req, res }),
    usage: usageHandler(deps.usage),
    listCaptures: requestLogHandler(deps.requestLog),
    createCaptureJob: ({ body, headers, req, res }) => jobs.create({ body, ...providerKey(headers), req, res }),
    getCaptureJob: ({ params, res }) => jobs.get({ jobId: params.jobId, res }),
    getCaptureJobFile: ({ params, res }) => jobs.file({ jobId: params.jobId, res }),
    cancelCaptureJob: ({ params, res }) => jobs.cancel({ jobId: params.jobId, res }),
    createCaptureBatch: ({ body, headers, req, res }) => bulk.create({ body, ...providerKey(headers), req, res }),
    getCaptureBatch: ({ params, res }) => bulk.get({ batchId: params.batchId, res }),
    cancelCaptureBatch: ({ params, res }) => bulk.cancel({ batchId: params.batchId, res }),
    listWebhookEvents: ({ query, res }) => webhooks.list({ query, res }),
    redeliverWebhookEvent: ({ params, res }) => webhooks.redeliver({ eventId: params.eventId, res }),
    createMonitor: ({ body, req, res }) => monitors.create({ body, req, res }),
    listMonitors: ({ res }) => monitors.list({ res }),
    getMonitor: ({ params, res }) => monitors.get({ monitorId: params.monitorId, res }),
    updateMonitor: ({ params, body, res }) => monitors.update({ monitorId: params.monitorId, body, res }),
    deleteMonitor: ({ params, res }) => monitors.remove({ monitorId: params.monitorId, res }),
    listMonitorRuns: ({ params, query, res }) => monitors.runs({ monitorId: params.monitorId, query, res }),
    pinMonitorRun: ({ params, res }) => monitors.pin({ monitorId: params.monitorId, runId: params.runId, res }),
    getMonitorRunImage: ({ params, res }) => monitors.image({ monitorId: params.monitorId, runId: params.runId, res }),
    getMonitorRunDiffImage: ({ params, res }) => monitors.diffImage({ monitorId: params.monitorId, runId: params.runId, res }),
    // The sides' fields named (before.url) ahead of the contract's generic validation.
    diff: { middleware: [diffBodyFields()], handler: ({ body, req, res }) => diffs.diff({ body, req, res }) },
    getDiffImage: ({ params, res }) => diffs.image({ diffId: params.diffId, image: params.image, res }),
  });
  createExpressEndpoints(contract, router, app, {
    logInitialization: false,
    requestValidationErrorHandler: (error, _req, _res, next) => next(error),
  });

  app.use((req, res) => sendError(res, new ApiError('NOT_FOUND', `No route for ${req.method} ${req.path}; see /docs`)));
  app.use(errorResponder(deps.logger));
  return app;
}

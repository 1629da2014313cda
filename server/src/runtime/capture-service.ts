import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ContentFilters } from '../capture/page/content-filters/index.js';
import { CaptureLanes } from '../capture/pool/capture-lanes.js';
import type { FairScheduler } from '../capture/pool/fair-scheduler.js';
import type { Renderer } from '../capture/renderer.js';
import { assertUrlAllowed } from '../security/target-policy.js';
import { AiAnalyzer } from '../services/ai-analysis.js';
import { CaptureService } from '../services/capture-service.js';
import { CaptureSubmission } from '../services/capture-submission.js';
import { ConcurrencyGate, defaultConcurrentCaptures } from '../services/concurrency-gate.js';
import type { DataLayer } from '../services/data-layer.js';
import type { ResponseCache } from '../services/response-cache.js';
import { RedisCapturePlaces } from '../services/shared-capture-places.js';

export interface CaptureServiceParts {
  data: DataLayer;
  logger: Logger;
  renderer: Renderer;
  scheduler: FairScheduler;
  cache: ResponseCache;
  contentFilters: ContentFilters;
  /** The rate limiter's Redis client, when there is one: the plans' concurrent captures are counted there across instances. */
  redis: Redis | undefined;
}

/** Builds the capture service and its acceptance (checks, credits), over the render side, the data layer and the concurrency gate. */
export function buildCaptureService(
  config: Config,
  { data, logger, renderer, scheduler, cache, contentFilters, redis }: CaptureServiceParts,
): { submission: CaptureSubmission; captures: CaptureService } {
  const lanes = new CaptureLanes({
    renderSlots: config.MAX_CONCURRENCY,
    videoSlots: config.VIDEO_CONCURRENCY,
    maxOrgSharePercent: config.MAX_ORG_SHARE_PERCENT,
  });
  // Acceptance (checks, credits) for /capture, POST /captures and bulk alike; the queues join once they exist.
  const submission = new CaptureSubmission({
    credits: data.credits,
    creditsPerCapture: config.CREDITS_PER_CAPTURE,
    checkDestination: (field, url) => assertUrlAllowed(data.policy, data.resolve, field, url),
  });
  const captures = new CaptureService(
    {
      renderer,
      scheduler,
      credits: data.credits,
      cache,
      storage: data.storage,
      storageConfigs: data.storageConfigs,
      ai: new AiAnalyzer({
        ...(config.OPENAI_BASE_URL ? { baseUrl: config.OPENAI_BASE_URL } : {}),
        model: config.OPENAI_MODEL,
        timeoutMs: config.OPENAI_TIMEOUT_MS,
      }),
      logger,
      submission,
      contentFilters,
      lanes,
      // Without a limit of the operator's (ORG_MAX_CONCURRENT_CAPTURES 0), only plans that set one are gated:
      // an organization alone filling the instance then gets the queue's own 503, which is what it is.
      concurrency: new ConcurrencyGate(
        config.ORG_MAX_CONCURRENT_CAPTURES > 0 ? defaultConcurrentCaptures(config) : Number.POSITIVE_INFINITY,
        redis ? new RedisCapturePlaces(redis, config.JOB_QUEUE_PREFIX, logger) : undefined,
      ),
    },
    { captureTimeoutMs: config.CAPTURE_TIMEOUT_MS },
  );
  return { submission, captures };
}

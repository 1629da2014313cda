import type { Logger } from 'pino';
import { ApiError } from '../errors.js';
import type { ContentFilters } from '../capture/page/content-filters/index.js';
import type { FairScheduler } from '../capture/pool/fair-scheduler.js';
import type { CaptureLanes } from '../capture/pool/capture-lanes.js';
import type { Renderer } from '../capture/renderer.js';
import { ClientGoneError } from '../capture/capture-error.js';
import { CaptureAdmission } from './capture-admission.js';
import { CaptureAnalysis } from './capture-analysis.js';
import { CaptureDelivery, type Delivery } from './capture-delivery.js';
import { captureFailure } from './capture-failures.js';
import { CaptureRendering } from './capture-rendering.js';
import type { CreditRepository, LedgerEntry } from '../store/credit-repository.js';
import type { StorageConfigRepository } from '../store/storage-config-repository.js';
import type { AiAnalyzer } from './ai-analysis.js';
import { ResponseCache, waitForFlight, type CachedRender } from './response-cache.js';
import type { StorageTarget, StorageUploader } from './storage.js';
import { requireOrganization } from './usage-service.js';
import type { CaptureSubmission, PrecheckCommand } from './capture-submission.js';
import type { ConcurrencyGate } from './concurrency-gate.js';
import { captureDeadlines } from './capture-deadlines.js';
import { isRecordingTimeout } from '../capture/output/capture-video.js';
import type { CaptureCommand, CaptureFile } from './capture-types.js';
import { loggableTarget } from './request-log.js';

export type { CaptureCommand, CaptureFile } from './capture-types.js';

export interface CaptureServiceOptions {
  captureTimeoutMs: number;
}

export interface CaptureServiceDependencies {
  renderer: Renderer;
  /** Shares the pool fairly between organizations; absent, captures go straight to the pool. */
  scheduler?: FairScheduler;
  credits: CreditRepository;
  cache: ResponseCache;
  storage: StorageUploader;
  storageConfigs: StorageConfigRepository;
  ai: AiAnalyzer;
  logger: Logger;
  /** Acceptance (the checks before any work, the credit reservation), shared with POST /captures and bulk: capture-submission.ts. */
  submission: CaptureSubmission;
  /** removeAds and removeCookieBanners (filter engines built once per process). */
  contentFilters: ContentFilters;
  /** The plans' limits of concurrent captures (docs/render-slots.md); absent, no limit. */
  concurrency?: ConcurrencyGate;
  /** Where videos and other long captures wait for their own places (capture/pool/capture-lanes.ts); absent, they take render slots like any capture. */
  lanes?: CaptureLanes;
}

/** One capture request on its way through the pipeline. */
interface Job {
  command: CaptureCommand;
  started: number;
  /** When its lane place came (capture-deadlines.ts). */
  placed?: number;
  entry: LedgerEntry;
  timings: Record<string, number>;
  analysis?: { prompt: string; providerKey: string; schema?: string };
  storage?: StorageTarget;
}

/** A render's file, with its quality report and metadata, as the answer carries them (a fresh render and a cache hit alike). */
const fileOf = (render: CachedRender) => ({
  fileName: render.fileName,
  mime: render.mime,
  buffer: render.buffer,
  page: render.page,
  quality: render.quality,
  ...(render.metadata ? { metadata: render.metadata } : {}),
});

/**
 * The capture use case: check, look in the cache, reserve credits, render, analyse and upload,
 * then commit on success or release on any failure. Nothing here knows about HTTP.
 *
 * Caching: a hit (or a request that waited for an identical one in flight) serves the stored
 * render and costs nothing; upload and AI analysis still run for each request, since neither is
 * part of the cache key. A render enters the cache only once its own request fully succeeded and
 * was charged, so a request that fails later (say, at the upload) never leaves a free render behind.
 */
export class CaptureService {
  private readonly credits: CreditRepository;
  private readonly cache: ResponseCache;
  private readonly storage: StorageUploader;
  private readonly storageConfigs: StorageConfigRepository;
  private readonly ai: AiAnalyzer;
  private readonly logger: Logger;

  constructor(
    dependencies: CaptureServiceDependencies,
    private readonly options: CaptureServiceOptions,
  ) {
    this.credits = dependencies.credits;
    this.cache = dependencies.cache;
    this.storage = dependencies.storage;
    this.storageConfigs = dependencies.storageConfigs;
    this.ai = dependencies.ai;
    this.logger = dependencies.logger;
    this.submission = dependencies.submission;
    this.admission = new CaptureAdmission({ concurrency: dependencies.concurrency, lanes: dependencies.lanes }, options);
    const { renderer, scheduler, contentFilters } = dependencies;
    this.rendering = new CaptureRendering({ renderer, scheduler, contentFilters }, options);
    this.delivery = new CaptureDelivery(new CaptureAnalysis(this.ai), this.storage, this.storageConfigs);
  }

  /** The plan's limit of concurrent captures and a long capture's lane place, before anything is reserved (capture-admission.ts). */
  private readonly admission: CaptureAdmission;

  /** The render itself: page steps, fair turn, renderer (capture-rendering.ts). */
  private readonly rendering: CaptureRendering;

  /** What follows a render: the AI step and the upload (capture-delivery.ts). */
  private readonly delivery: CaptureDelivery;

  private readonly submission: CaptureSubmission;

  /** precheck without compiling openaiSchema (capture-submission.ts): a monitor's options are checked with it. */
  cheapChecks(command: PrecheckCommand): Promise<string | undefined> {
    return this.submission.cheapChecks(command);
  }

  async capture(command: CaptureCommand): Promise<CaptureFile> {
    const started = Date.now();
    // The provider key the rule chose (header first), for the AI analysis.
    const providerKey = await this.submission.precheck(command).catch((error: unknown) => {
      // A client that left while its schema waited for a thread is the usual departure, not an unexpected error.
      throw error instanceof ClientGoneError ? this.mapFailure(error) : error;
    });
    const organizationId = requireOrganization(command.key);
    const { options } = command;

    const job: Job = {
      command,
      started,
      timings: {},
      entry: {
        requestId: command.requestId,
        organizationId,
        apiKeyId: command.key.keyId,
        format: options.format,
        source: options.url !== undefined ? 'url' : 'html',
        targetHost: options.url !== undefined ? new URL(options.url).host : null,
        userAgent: options.userAgent ?? null,
        ...(command.mode ? { mode: command.mode } : {}),
        kind: command.kind ?? (command.mode === 'async' ? 'async' : 'sync'),
        target: options.url !== undefined ? loggableTarget(options.url) : null,
        ...(command.jobId ? { jobId: command.jobId } : {}),
      },
      ...(options.openaiPrompt !== undefined
        ? {
            analysis: {
              prompt: options.openaiPrompt,
              providerKey: providerKey!,
              ...(options.openaiSchema ? { schema: options.openaiSchema } : {}),
            },
          }
        : {}),
    };
    const storage = await this.delivery.storageTarget(organizationId, options);
    if (storage) job.storage = storage;

    if (!options.cacheEnabled) return this.admission.withinLimit(job, () => this.renderAndCharge(job));

    const key = ResponseCache.keyFor(organizationId, options);
    for (;;) {
      const cached = this.cache.get(key, options.cacheTtl);
      if (cached) return this.serveFromCache(job, cached);
      const running = this.cache.flight(key);
      if (running) {
        const waitStarted = Date.now();
        let render: CachedRender;
        try {
          render = await waitForFlight(running, command.signal);
        } catch (error) {
          if (error instanceof ClientGoneError) throw this.mapFailure(error);
          // The page itself answered no (protected target, selector not found): the same options
          // would fail the same way, so the error is shared rather than rendered again.
          if (this.rendering.refusedByPage(error)) throw error;
          // Otherwise the reason may be the other request's own (credits, upload, its client
          // leaving, its deadline): this one tries again rather than inheriting the error.
          continue;
        }
        job.timings.cache = Date.now() - waitStarted;
        return this.serveFromCache(job, render);
      }
      const flight = this.cache.beginFlight(key);
      try {
        const file = await this.admission.withinLimit(job, () =>
          this.renderAndCharge(job, (render) => {
            this.cache.set(key, render, options.cacheTtl);
            flight.resolve(render);
          }),
        );
        return { ...file, cache: 'MISS' };
      } catch (error) {
        flight.reject(error);
        throw error;
      } finally {
        this.cache.endFlight(key, flight);
      }
    }
  }

  /** A cache miss or a request without caching: reserve, render, deliver, charge. */
  private async renderAndCharge(job: Job, onCharged?: (render: CachedRender) => void): Promise<CaptureFile> {
    const { command, entry, timings } = job;
    const { options, requestId } = command;
    const cost = this.submission.costOf(options);
    const deadlines = this.deadlinesOf(job);
    // 402 when the balance is short; a database failure is the repository's 503.
    await this.submission.reserve({ ...entry, deadline: deadlines.reservation }, cost);

    try {
      const render = await this.rendering.render(job, deadlines);
      const delivery = await this.delivery.deliver(job, render);
      if (command.signal.aborted) throw new ClientGoneError();
      const processingTime = Date.now() - job.started;
      // An async job records its file, its success and this charge as one fact (docs/async-jobs.md, "Charged exactly once").
      const committed = command.finish
        ? await command.finish({ requestId, charged: true, credits: cost, ...render, processingTime, ...delivery })
        : await this.credits.commit(requestId, { processingMs: processingTime, fileSize: render.buffer.length });
      if (!committed)
        throw new ApiError('CAPTURE_TIMEOUT', 'The capture outlived its credit reservation (released as stale); nothing was charged', {
          logDetail: { requestId },
        });
      onCharged?.(render);
      return { requestId, ...fileOf(render), processingTime, timings, ...delivery };
    } catch (error) {
      const mapped = this.mapFailure(error, (isRecordingTimeout(error) ? deadlines.limit : deadlines.page) - job.started);
      const ended = { processingMs: Date.now() - job.started, httpStatus: mapped.status };
      await this.credits
        .release(requestId, mapped.code, ended)
        .catch((releaseError: unknown) =>
          this.logger.error({ err: releaseError, requestId }, 'could not release a reservation; the stale-reservation sweeper will'),
        );
      throw mapped;
    }
  }

  /** A cache hit (or a wait on an identical request): no render, no charge, a cache_hit ledger row. */
  private async serveFromCache(job: Job, render: CachedRender): Promise<CaptureFile> {
    const { requestId } = job.command;
    let delivery: Delivery;
    try {
      delivery = await this.delivery.deliver(job, render);
      if (job.command.signal.aborted) throw new ClientGoneError();
    } catch (error) {
      throw this.mapFailure(error);
    }
    const processingTime = Date.now() - job.started;
    if (job.command.finish) {
      const recorded = await job.command.finish({ requestId, charged: false, credits: 0, ...render, processingTime, ...delivery });
      if (!recorded) throw new ApiError('OPERATION_FAILED', 'The capture job had already ended in another attempt; nothing was charged');
    }
    await this.credits
      .recordCacheHit(job.entry, { processingMs: processingTime, fileSize: render.buffer.length })
      .catch((error: unknown) => this.logger.warn({ err: error, requestId }, 'could not record a cache hit in the ledger'));
    return { requestId, ...fileOf(render), processingTime, timings: job.timings, ...delivery, cache: 'HIT' };
  }

  private deadlinesOf(job: Job) {
    const clock = { started: job.started, placed: job.placed, async: job.command.mode === 'async' };
    return captureDeadlines(this.options.captureTimeoutMs, job.command.options, clock);
  }

  private mapFailure(error: unknown, budgetMs = this.options.captureTimeoutMs): ApiError {
    return captureFailure(error, budgetMs);
  }
}

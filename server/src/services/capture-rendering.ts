import { isContentFormat } from '@daguerre/contract';
import type { Page } from 'puppeteer-core';
import { ApiError } from '../errors.js';
import type { ContentFilters } from '../capture/page/content-filters/index.js';
import type { FairScheduler } from '../capture/pool/fair-scheduler.js';
import { Renderer } from '../capture/renderer.js';
import { ClientGoneError, isInputFault } from '../capture/capture-error.js';
import { finishInsight } from '../capture/insight/page-insight.js';
import type { LedgerEntry } from '../store/credit-repository.js';
import type { CaptureDeadlines } from './capture-deadlines.js';
import { captureFailure } from './capture-failures.js';
import type { CaptureCommand } from './capture-types.js';
import type { CachedRender } from './response-cache.js';
import { requireOrganization } from './usage-service.js';

/** What rendering needs of a capture: the request, whose it is, where its timings go, and whether it is analysed. */
export interface RenderingRequest {
  command: CaptureCommand;
  entry: Pick<LedgerEntry, 'organizationId'>;
  timings: Record<string, number>;
  analysis?: unknown;
}

/** What rendering is done with: the renderer, the fair share in front of it, and the ad and cookie filters. */
export interface RenderingDependencies {
  renderer: Renderer;
  /** Shares the pool fairly between organizations; absent, captures go straight to the pool. */
  scheduler?: FairScheduler | undefined;
  /** removeAds and removeCookieBanners (filter engines built once per process). */
  contentFilters: ContentFilters;
}

/**
 * The render of one capture for the capture service (capture-service.ts): the steps it adds on the
 * page (content filters, the request's readPage, the analysis PNG), the organization's fair turn,
 * then the renderer; what comes back is the render as the cache keeps it.
 */
export class CaptureRendering {
  /** Errors a render answered with that depend only on the page and the options (4xx from the renderer). */
  private readonly pageRefusals = new WeakSet<object>();

  constructor(
    private readonly dependencies: RenderingDependencies,
    private readonly options: { captureTimeoutMs: number },
  ) {}

  /** Whether `error` is a render's refusal of the page itself, which identical requests share rather than render again. */
  refusedByPage(error: unknown): boolean {
    return this.pageRefusals.has(error as object);
  }

  async render(job: RenderingRequest, deadlines: Pick<CaptureDeadlines, 'page' | 'limit'>): Promise<CachedRender> {
    const { renderer, scheduler, contentFilters } = this.dependencies;
    const { command, timings } = job;
    const { options, requestId } = command;
    // A pdf is analysed from a PNG of the same page; with caching on it is kept for later hits too.
    let analysisPng: Buffer | undefined;
    const wantsPng = (options.format === 'pdf' || isContentFormat(options.format)) && (job.analysis !== undefined || options.cacheEnabled);
    const deadline = deadlines.page;
    // Ads and cookie banners go before the analysis PNG is taken, so that it shows the cleaned page too.
    const filters = await contentFilters.hooksFor(options, { deadline, timings });
    const afterLoadSteps = [
      filters?.afterLoad,
      command.readPage,
      wantsPng ? async (page: Page) => void (analysisPng = await Renderer.analysisPng(page)) : undefined,
    ].filter((step): step is (page: Page) => Promise<void> => step !== undefined);
    // Fair share (docs/render-slots.md): the organization's turn comes before a pool slot is asked for.
    const renderFairly = (request: Parameters<Renderer['render']>[0]) =>
      scheduler
        ? scheduler.run(
            job.entry.organizationId,
            { ...request, ...(command.key.fairShare ? { share: command.key.fairShare } : {}) },
            (signal) => renderer.render({ ...request, signal }),
          )
        : renderer.render(request);
    const result = await renderFairly({
      options,
      organizationId: requireOrganization(command.key),
      deadline,
      recordingDeadline: deadlines.limit,
      signal: command.signal,
      timings,
      ...(filters?.requestFilters.length ? { requestFilters: filters.requestFilters } : {}),
      ...(filters ? { beforeNavigate: filters.beforeNavigate, cleanup: filters.cleanup } : {}),
      ...(afterLoadSteps.length > 0
        ? {
            afterLoad: async (page: Page) => {
              for (const step of afterLoadSteps) await step(page);
            },
          }
        : {}),
    }).catch((error: unknown) => {
      // A refusal of the page itself (capture-error.ts, fault 'input') is kept as its answer, which identical requests share.
      const answer = isInputFault(error) ? captureFailure(error, this.options.captureTimeoutMs) : error;
      if (answer instanceof ApiError && answer.status >= 400 && answer.status < 500) this.pageRefusals.add(answer);
      throw answer;
    });
    if (command.signal.aborted) throw new ClientGoneError();
    const png = result.analysisPng ?? analysisPng;
    return {
      buffer: result.buffer,
      mime: result.mime,
      extension: result.extension,
      fileName: `capture-${requestId}.${result.extension}`,
      ...(png ? { analysisPng: png } : {}),
      page: result.page,
      ...finishInsight(result, result.buffer, timings),
      renderedAt: Date.now(),
    };
  }
}

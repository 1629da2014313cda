import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { BrowserSide } from '../capture/browser/browser-start.js';
import { MemoryCgroups } from '../capture/browser/renderer-memory-cgroup.js';
import { pageMemoryLimit, RendererMemoryWatchdog } from '../capture/browser/renderer-memory-watchdog.js';
import { ContextPool } from '../capture/pool/context-pool.js';
import { FairScheduler } from '../capture/pool/fair-scheduler.js';
import { Renderer } from '../capture/renderer.js';

export interface RenderSide {
  /** Ends Chromium processes past RENDERER_MEMORY_LIMIT_MB (docs/containment.md). */
  memoryWatchdog: RendererMemoryWatchdog;
  pool: ContextPool;
  /** The pool's first contexts opening: a browser that cannot start rejects it. */
  warming: Promise<void>;
  scheduler: FairScheduler;
  renderer: Renderer;
}

/** Starts the render side over Chromium: the memory watchdog, the context pool (warming), the fair scheduler and the renderer. */
export function startRenderSide(config: Config, browserSide: BrowserSide, logger: Logger): RenderSide {
  const { egress, browser } = browserSide;
  // All of a renderer's memory, not only its JS heap, has a limit (docs/containment.md).
  const cgroups = MemoryCgroups.open();
  const memoryWatchdog = new RendererMemoryWatchdog({
    limitBytes: config.RENDERER_MEMORY_LIMIT_MB * 1024 ** 2,
    roots: () => browser.pids(),
    logger,
    ...(cgroups ? { cgroups } : {}),
  });
  memoryWatchdog.start();
  logger.info(
    { limitMb: config.RENDERER_MEMORY_LIMIT_MB, kernelHold: memoryWatchdog.kernelHold, renderSlots: config.MAX_CONCURRENCY },
    'renderer memory limit and render slots (MAX_CONCURRENCY)',
  );
  const pool = new ContextPool(browser, {
    size: config.MAX_CONCURRENCY,
    maxQueue: config.MAX_QUEUE,
    reuseLimit: config.CONTEXT_REUSE_LIMIT,
    spares: config.SPARE_CONTEXTS,
    warmContexts: config.WARM_CONTEXTS,
    rendererReuseLimit: config.RENDERER_REUSE_LIMIT,
    rendererGcEvery: config.RENDERER_GC_EVERY,
    logger,
  });
  // The first contexts open while the rest starts; a job taken before they are ready opens its own.
  const warming = pool.warm();
  // Same concurrency as the pool, so the pool's own queue stays empty and the order is the scheduler's.
  const scheduler = new FairScheduler({
    concurrency: config.MAX_CONCURRENCY,
    maxQueue: config.MAX_QUEUE,
    maxOrgShare: config.MAX_ORG_SHARE_PERCENT / 100,
  });
  const renderer = new Renderer(pool, browser, {
    openProxyChain: (upstream) => egress.openChain(upstream),
    wasRefused: (url) => egress.refusedRecently(url),
    connectionFailure: (url) => egress.failureOf(url),
    fullPageBudget: { maxHeightPx: config.FULL_PAGE_MAX_HEIGHT_PX, maxPixels: config.FULL_PAGE_MAX_PIXELS },
    unresponsiveTimeoutMs: config.PAGE_UNRESPONSIVE_TIMEOUT_MS,
    explainCrash: () => (memoryWatchdog.claim() ? pageMemoryLimit(memoryWatchdog.limitBytes) : undefined),
    video: { ffmpegPath: config.FFMPEG_PATH, maxBytes: config.VIDEO_MAX_BYTES },
  });
  return { memoryWatchdog, pool, warming, scheduler, renderer };
}

import type { FiltersEngine } from '@ghostery/adblocker';
import type { Logger } from 'pino';
import type { Page } from 'puppeteer-core';
import type { RequestFilter } from '../page-setup.js';
import { CaptureError, CaptureTimeoutError } from '../../capture-error.js';
import { AdBlockSession } from './ad-blocker.js';
import {
  CookieBannerSession,
  DEFAULT_CONSENT_TIMINGS,
  loadConsentEngineAssets,
  type ConsentEngineAssets,
  type ConsentTimings,
} from './cookie-banners.js';
import { DocumentStartRegistry } from './document-start.js';
import { loadEngine, type EngineLoadOptions, type EngineName } from './engines.js';
import { ignoreBecause } from '../../../ignore-error.js';

export { FILTER_LIST_DIR, readManifest } from './engines.js';

export interface ContentFilterOptions {
  removeAds: boolean;
  removeCookieBanners: boolean;
  /** The target (document-start rules are chosen for its host); absent for inline html. */
  url?: string | undefined;
}

/**
 * What one capture hands the renderer: request filters (ads), a step before navigation (scripts
 * and styles for every document from its start), one once the page has loaded, and the removal of
 * what was installed before navigation (it must run however the capture ends: pages are reused).
 */
export interface ContentFilterHooks {
  requestFilters: RequestFilter[];
  beforeNavigate: (page: Page) => Promise<void>;
  afterLoad: (page: Page) => Promise<void>;
  cleanup: () => Promise<void>;
}

export interface ContentFiltersSettings extends EngineLoadOptions {
  logger: Logger;
  consentTimings?: ConsentTimings;
}

/** Time kept back from the capture deadline for the screenshot itself. */
const CAPTURE_RESERVE_MS = 2_500;

const FIELD_OF: Record<EngineName, keyof ContentFilterOptions> = { ads: 'removeAds', cookies: 'removeCookieBanners' };

/**
 * removeAds and removeCookieBanners. The filter engines are built once per process (from the
 * serialized cache when the bundled lists are unchanged) and shared by every capture; a capture
 * that asks for neither option costs nothing here: no request interception, no script.
 */
export class ContentFilters {
  private readonly engines = new Map<EngineName, Promise<FiltersEngine>>();

  constructor(private readonly settings: ContentFiltersSettings) {}

  /** Loads everything in the background (at start-up), so the first capture that asks does not wait for it. */
  warm(): Promise<void> {
    return Promise.all([this.engine('ads'), this.engine('cookies'), this.consentAssets()]).then(
      () => undefined,
      ignoreBecause('already logged; the next capture that needs it tries again'),
    );
  }

  /**
   * The hooks for one capture, or undefined when it asked for no filtering. Waits (within the
   * deadline) for an engine that is still loading.
   */
  async hooksFor(
    options: ContentFilterOptions,
    context: { deadline: number; timings: Record<string, number> },
  ): Promise<ContentFilterHooks | undefined> {
    if (!options.removeAds && !options.removeCookieBanners) return undefined;
    const started = Date.now();
    const [adEngine, cookieEngine, assets] = await this.withinDeadline(
      Promise.all([
        options.removeAds ? this.require('ads') : undefined,
        options.removeCookieBanners ? this.require('cookies') : undefined,
        options.removeCookieBanners ? this.consentAssets().catch((error: unknown) => this.unavailable('cookies', error)) : undefined,
      ]),
      context.deadline,
    );
    const waited = Date.now() - started;
    if (waited > 50) context.timings.filters = waited;

    const ads = adEngine ? new AdBlockSession(adEngine) : undefined;
    const cookies =
      cookieEngine && assets
        ? new CookieBannerSession(assets, cookieEngine, this.settings.consentTimings ?? DEFAULT_CONSENT_TIMINGS)
        : undefined;
    const targetUrl = options.url ?? 'data:';
    let registry: DocumentStartRegistry | undefined;
    return {
      requestFilters: ads ? [ads.requestFilter] : [],
      beforeNavigate: async (page) => {
        registry = new DocumentStartRegistry(page);
        await ads?.beforeNavigate(registry, targetUrl);
        await cookies?.beforeNavigate(registry, targetUrl);
      },
      cleanup: async () => {
        await registry?.remove();
      },
      afterLoad: async (page) => {
        const log: Record<string, unknown> = {};
        if (ads) {
          const begun = Date.now();
          log.ads = await ads.afterLoad(page);
          context.timings.ads = Date.now() - begun;
        }
        if (cookies) {
          const begun = Date.now();
          log.cookies = await cookies.afterLoad(page, context.deadline - CAPTURE_RESERVE_MS);
          context.timings.cookies = Date.now() - begun;
        }
        this.settings.logger.debug(log, 'content filters applied');
      },
    };
  }

  private engine(name: EngineName): Promise<FiltersEngine> {
    let loading = this.engines.get(name);
    if (!loading) {
      loading = loadEngine(name, this.settings).then(
        (loaded) => {
          this.settings.logger.info(
            { engine: name, source: loaded.source, ms: loaded.ms, lists: loaded.lists.map((list) => `${list.title} ${list.version}`) },
            'filter engine ready',
          );
          return loaded.engine;
        },
        (error: unknown) => {
          this.engines.delete(name);
          this.settings.logger.error({ err: error, engine: name }, 'could not load the filter lists');
          throw error;
        },
      );
      this.engines.set(name, loading);
    }
    return loading;
  }

  private consentAssets(): Promise<ConsentEngineAssets> {
    return loadConsentEngineAssets().catch((error: unknown) => {
      this.settings.logger.error({ err: error }, 'could not load the consent engine (autoconsent)');
      throw error;
    });
  }

  /** An engine for a capture: a failure to load is 'filters-unavailable' naming the option (a 503), and nothing is charged. */
  private require(name: EngineName): Promise<FiltersEngine> {
    return this.engine(name).catch((error: unknown) => this.unavailable(name, error));
  }

  private unavailable(name: EngineName, cause: unknown): never {
    const field = FIELD_OF[name];
    throw new CaptureError(
      'filters-unavailable',
      `${field} is unavailable: this server could not load its filters; nothing was charged. Retry, or capture without ${field}.`,
      {
        logDetail: cause,
        retryAfterSeconds: 5,
      },
    );
  }

  private async withinDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CaptureTimeoutError('loading the filter lists')), Math.max(0, deadline - Date.now()));
    });
    work.catch(ignoreBecause('raced against the deadline below, which sees its failure'));
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

import { resolveDevice, type CaptureOptions } from '@rendershot/contract';
import type { HTTPRequest, Page, ResourceType } from 'puppeteer';
import type { Slot } from './context-pool.js';

export interface Viewport {
  width: number;
  height: number;
  scale: number;
  mobile: boolean;
  touch: boolean;
  userAgent: string;
}

/** The effective viewport: the device preset, overridden by viewportWidth/Height, scaleFactor and userAgent. */
export function effectiveViewport(options: CaptureOptions): Viewport {
  const preset = resolveDevice(options.device);
  return {
    width: Math.round(options.viewportWidth ?? preset.width),
    height: Math.round(options.viewportHeight ?? preset.height),
    scale: options.scaleFactor ?? preset.scale,
    mobile: preset.mobile,
    touch: preset.touch,
    userAgent: options.userAgent ?? preset.userAgent,
  };
}

const RESOURCE_TYPES: Record<string, ResourceType[]> = {
  stylesheet: ['stylesheet'],
  script: ['script'],
  image: ['image'],
  font: ['font'],
  media: ['media'],
};

/** `*` matches any run of characters; everything else is literal. A pattern without `*` matches as a substring. */
export function urlPatternToRegExp(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(pattern.includes('*') ? `^${escaped}$` : escaped, 'i');
}

export type RequestFilter = (request: HTTPRequest) => boolean;

/**
 * Applies every per-capture setting to the slot's page. Everything is set explicitly on every
 * capture (not only when asked) so that nothing from the previous capture on a reused page survives.
 */
export async function preparePage(slot: Slot, options: CaptureOptions, extraBlock: RequestFilter[] = []): Promise<() => void> {
  const { page, session, context } = slot;
  const viewport = effectiveViewport(options);
  await page.setViewport({
    width: viewport.width,
    height: viewport.height,
    deviceScaleFactor: viewport.scale,
    isMobile: viewport.mobile,
    hasTouch: viewport.touch,
  });
  await page.setUserAgent(viewport.userAgent);
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: options.theme === 'auto' ? '' : options.theme }]);
  await page.setExtraHTTPHeaders(options.headers ?? {});
  await page.setJavaScriptEnabled(true);
  await page.emulateMediaType(undefined);

  if (options.latitude !== undefined && options.longitude !== undefined) {
    // Granted for every origin of this context (the target may redirect); cleared on reset.
    const browserSession = await slot.browser.target().createCDPSession();
    try {
      await browserSession.send('Browser.grantPermissions', {
        permissions: ['geolocation'],
        browserContextId: (context as unknown as { id: string }).id,
      });
    } finally {
      await browserSession.detach().catch(() => undefined);
    }
    await page.setGeolocation({ latitude: options.latitude, longitude: options.longitude, accuracy: 10 });
  } else {
    await session.send('Emulation.clearGeolocationOverride');
  }

  const blockedTypes = new Set((options.blockResources ?? []).flatMap((type) => RESOURCE_TYPES[type] ?? []));
  const blockedUrls = (options.blockUrls ?? []).map(urlPatternToRegExp);
  const filters: RequestFilter[] = [...extraBlock];
  if (blockedTypes.size > 0) filters.push((request) => blockedTypes.has(request.resourceType()));
  if (blockedUrls.length > 0) filters.push((request) => blockedUrls.some((re) => re.test(request.url())));

  if (filters.length === 0) {
    await page.setRequestInterception(false);
    return () => undefined;
  }
  await page.setRequestInterception(true);
  const onRequest = (request: HTTPRequest) => {
    if (request.isInterceptResolutionHandled()) return;
    const url = request.url();
    // The document itself (and inline html) is never blocked by type filters.
    const isMainDocument = request.isNavigationRequest() && request.frame() === page.mainFrame();
    if (!isMainDocument && !url.startsWith('data:') && filters.some((blocked) => blocked(request))) {
      void request.abort('blockedbyclient').catch(() => undefined);
    } else {
      void request.continue().catch(() => undefined);
    }
  };
  page.on('request', onRequest);
  return () => page.off('request', onRequest);
}

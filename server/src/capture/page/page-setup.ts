import { resolveDevice, type CaptureOptions, type DevicePreset } from '@daguerre/contract';
import type { HTTPRequest, ResourceType } from 'puppeteer-core';
import type { Slot } from '../pool/context-pool.js';
import { acceptLanguage, applyLocale, requestHeaders } from './page-locale.js';
import { applyFontFamilies } from './page-fonts.js';
import { ignoreBecause } from '../../ignore-error.js';

/** The preset's emulation settings after the request's overrides. */
export type Viewport = Pick<DevicePreset, 'width' | 'height' | 'scale' | 'mobile' | 'touch' | 'userAgent'>;

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

/** Touch and mobile emulation as puppeteer compares them to decide whether setViewport reloads the page (parked-page.ts). */
export function touchAndMobile(options: CaptureOptions): string {
  const viewport = effectiveViewport(options);
  return `${viewport.mobile}/${viewport.touch}`;
}

const RESOURCE_TYPES: Record<string, ResourceType[]> = {
  stylesheet: ['stylesheet'],
  script: ['script'],
  image: ['image'],
  font: ['font'],
  media: ['media'],
};

/**
 * navigator.platform to go with a user agent, so that an iPhone preset does not report
 * "Linux x86_64". Undefined (Chromium's own value) for agents it does not recognize.
 */
export function platformOf(userAgent: string): string | undefined {
  if (/\biPhone\b/.test(userAgent)) return 'iPhone';
  if (/\biPad\b/.test(userAgent)) return 'iPad';
  if (/\bAndroid\b/.test(userAgent)) return 'Linux armv81';
  if (/\bWindows\b/.test(userAgent)) return 'Win32';
  if (/\bMacintosh\b/.test(userAgent)) return 'MacIntel';
  if (/\bLinux\b/.test(userAgent)) return 'Linux x86_64';
  return undefined;
}

/** `*` matches any run of characters; everything else is literal. A pattern without `*` matches as a substring. */
export function urlPatternToRegExp(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(pattern.includes('*') ? `^${escaped}$` : escaped, 'i');
}

/**
 * Sets the emulated media type and prefers-color-scheme in one call. Puppeteer's
 * emulateMediaType and emulateMediaFeatures each send Emulation.setEmulatedMedia with only their
 * half, and Chromium clears the other half: a later emulateMediaType('screen') would drop the theme.
 * `auto` clears the override, so the page's own default applies.
 */
export async function emulateMedia(
  slot: Slot,
  options: Pick<CaptureOptions, 'theme'> & Partial<Pick<CaptureOptions, 'reducedMotion'>>,
  media: '' | 'screen' | 'print',
): Promise<void> {
  // Media changed after preparePage (a pdf's own): the next capture applies its settings again.
  slot.applied = undefined;
  await slot.session.send('Emulation.setEmulatedMedia', {
    media,
    features: [
      { name: 'prefers-color-scheme', value: options.theme === 'auto' ? '' : options.theme },
      { name: 'prefers-reduced-motion', value: options.reducedMotion ? 'reduce' : '' },
    ],
  });
}

export type RequestFilter = (request: HTTPRequest) => boolean;

async function transparentBackground(slot: Slot): Promise<void> {
  slot.doubtful = true;
  await slot.session.send('Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } });
}

async function geolocation(slot: Slot, options: CaptureOptions): Promise<void> {
  if (options.latitude !== undefined && options.longitude !== undefined) {
    // Granted for every origin of this context (the target may redirect); reset before reuse. Sent
    // on the browser's own connection: Chromium drops the permission overrides a CDP session made
    // when that session detaches, so a short-lived session would take the grant away again.
    await slot.context.setPermission('*', { permission: { name: 'geolocation' }, state: 'granted' });
    // Set and cleared on the same session, so that the clear of a later capture undoes it.
    await slot.session.send('Emulation.setGeolocationOverride', { latitude: options.latitude, longitude: options.longitude, accuracy: 10 });
  } else {
    await slot.session.send('Emulation.clearGeolocationOverride');
  }
}

/**
 * The per-capture settings preparePage applies, as one string; undefined for settings that must be
 * applied on every capture: a geolocation (its permission is cleared by every reset) and a
 * transparent background (the context is replaced afterwards).
 */
function settingsKey(options: CaptureOptions, viewport: Viewport): string | undefined {
  if (options.omitBackground || options.latitude !== undefined || options.longitude !== undefined) return undefined;
  return JSON.stringify([
    viewport,
    options.mediaType ?? '',
    options.theme,
    options.reducedMotion ?? false,
    requestHeaders(options),
    options.timezone ?? '',
    options.locale ?? '',
  ]);
}

/**
 * Applies every per-capture setting to the slot's page, so that nothing from the previous capture
 * on a reused page survives. They stay on the page (Chromium keeps a target's emulation across its
 * navigations, and the reset leaves it): when the previous capture on this page applied the very
 * same settings, they are not sent again: about 10 DevTools commands a capture, which the renderer
 * applied to the parked document it was about to replace (measured on kept pages of a real saved
 * page, heise, at four clients: about 5 ms of renderer and 3 ms of browser CPU a capture, noisy).
 */
export async function preparePage(slot: Slot, options: CaptureOptions, extraBlock: RequestFilter[] = []): Promise<() => void> {
  const viewport = effectiveViewport(options);
  const key = settingsKey(options, viewport);
  if (key === undefined || slot.applied !== key) await applySettings(slot, options, viewport);
  slot.applied = key;
  return filterRequests(slot, options, extraBlock);
}

async function applySettings(slot: Slot, options: CaptureOptions, viewport: Viewport): Promise<void> {
  const { page, session } = slot;
  slot.applied = undefined;
  // Platform for the user agent: puppeteer's override reaches every frame's session (out-of-process
  // iframes too); only the Emulation domain's also sets navigator.platform and Accept-Language.
  const platform = platformOf(viewport.userAgent);
  slot.emulated = touchAndMobile(options);
  // Independent settings, sent together: one round trip's wait instead of ten, which counts when the
  // browser is busy resetting another organization's context (measured: setup 27 → 16 ms with four
  // organizations taking turns, 4 → 2.5 ms with one).
  // Only the two user-agent overrides have an order: the Emulation one, with the language, last.
  await Promise.all([
    page.setViewport({
      width: viewport.width,
      height: viewport.height,
      deviceScaleFactor: viewport.scale,
      isMobile: viewport.mobile,
      hasTouch: viewport.touch,
    }),
    page.setUserAgent({ userAgent: viewport.userAgent, ...(platform ? { platform } : {}) }).then(() =>
      session.send('Emulation.setUserAgentOverride', {
        userAgent: viewport.userAgent,
        ...(platform ? { platform } : {}),
        ...acceptLanguage(options),
      }),
    ),
    emulateMedia(slot, options, options.mediaType ?? ''),
    page.setExtraHTTPHeaders(requestHeaders(options)),
    applyLocale(slot, options),
    applyFontFamilies(session),
    page.setJavaScriptEnabled(true),
    // omitBackground: set here for the whole capture (every tile of a stitched page too), never by
    // the screenshots. Clearing the override does not make a kept renderer opaque again (measured:
    // the next capture came out transparent), so a context that made a transparent capture is
    // replaced afterwards rather than reused.
    options.omitBackground ? transparentBackground(slot) : undefined,
    geolocation(slot, options),
  ]);
}

/** The request filters of the capture (blockResources, blockUrls and the caller's extra ones); returns what removes them. */
async function filterRequests(slot: Slot, options: CaptureOptions, extraBlock: RequestFilter[]): Promise<() => void> {
  const { page } = slot;
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
      void request
        .abort('blockedbyclient')
        .catch(ignoreBecause('the request ends either way: its page may be gone, or it was answered already'));
    } else {
      void request.continue().catch(ignoreBecause('the request ends either way: its page may be gone, or it was answered already'));
    }
  };
  page.on('request', onRequest);
  return () => page.off('request', onRequest);
}

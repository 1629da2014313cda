import type { CaptureOptions } from '@daguerre/contract';
import type { Slot } from '../pool/context-pool.js';

/**
 * The extra request headers for a capture: the caller's `headers`, plus Accept-Language from
 * `locale` (the contract refuses both at once, since Chromium's locale override would win).
 */
export function requestHeaders(options: Pick<CaptureOptions, 'locale' | 'headers'>): Record<string, string> {
  return { ...(options.locale ? { 'Accept-Language': options.locale } : {}), ...(options.headers ?? {}) };
}

/**
 * The user agent override's acceptLanguage: it sets navigator.language(s) and the default
 * Accept-Language; absent, Chromium's own applies again (the override is sent on every capture).
 */
export function acceptLanguage(options: Pick<CaptureOptions, 'locale'>): { acceptLanguage?: string } {
  return options.locale ? { acceptLanguage: options.locale } : {};
}

/**
 * Sets (or clears) the time zone and locale overrides on every capture, so that a warm page reused
 * from the pool never keeps the previous capture's values: an empty timezoneId and an absent locale
 * clear Chromium's overrides.
 */
export async function applyLocale(slot: Slot, options: Pick<CaptureOptions, 'timezone' | 'locale'>): Promise<void> {
  await slot.session.send('Emulation.setTimezoneOverride', { timezoneId: options.timezone ?? '' });
  await slot.session.send('Emulation.setLocaleOverride', options.locale ? { locale: options.locale } : {});
}

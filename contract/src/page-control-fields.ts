import { z } from 'zod';
import { selector } from './content-filter-fields.js';
import { LIMITS } from './limits.js';
import { booleanParam, listParam, stringParam } from './params.js';

export const MEDIA_TYPES = ['screen', 'print'] as const;

function isKnownTimezone(value: string): boolean {
  if (value === 'UTC') return true;
  return Intl.supportedValuesOf('timeZone').includes(value);
}

function isBcp47(value: string): boolean {
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

/**
 * The parameters of `GET /capture` that change how the page looks and what it sees: hidden
 * elements, added styles, time zone, locale, media type, reduced motion (docs/page-control-and-pdf.md).
 */
export const pageControlFields = {
  hideSelectors: listParam(
    'hideSelectors',
    selector,
    LIMITS.listMaxEntries,
    'Comma-separated CSS selectors of elements to hide (visibility: hidden; the layout is kept).',
  ),
  styles: stringParam('styles', 100_000, 'CSS text added to the page before capture.'),
  timezone: z
    .string({ errorMap: () => ({ message: 'timezone must be a string' }) })
    .refine(isKnownTimezone, 'timezone must be an IANA time zone name the runtime knows, e.g. Europe/Paris or UTC')
    .optional()
    .describe("IANA time zone the page sees, e.g. Europe/Paris. Default: the server's time zone."),
  locale: z
    .string({ errorMap: () => ({ message: 'locale must be a string' }) })
    .max(64, 'locale must be at most 64 characters')
    .refine(isBcp47, 'locale must be a BCP 47 language tag, e.g. en-US or fr-FR')
    .optional()
    .describe("BCP 47 locale: sets navigator.language and the Accept-Language header. Default: the browser's own (en-US)."),

  mediaType: z
    .enum(MEDIA_TYPES, { errorMap: () => ({ message: `mediaType must be one of: ${MEDIA_TYPES.join(', ')}` }) })
    .optional()
    .describe("Emulated CSS media type: screen or print. Default: none (the page's own, screen for images)."),
  reducedMotion: booleanParam(
    'reducedMotion',
    false,
    'true: the page sees prefers-reduced-motion: reduce; running CSS transitions and animations and finite Web Animations jump to their end state before capture, endless ones stop, and known carousels (Swiper, Slick, Bootstrap, Splide, Flickity) stop their autoplay.',
  ),
};

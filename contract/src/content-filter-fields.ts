import { z } from 'zod';
import { LIMITS } from './limits.js';
import { booleanParam, listParam } from './params.js';

export const BLOCKABLE_RESOURCES = ['stylesheet', 'script', 'image', 'font', 'media'] as const;

const blockedResource = z.enum(BLOCKABLE_RESOURCES, {
  errorMap: () => ({ message: `blockResources entries must be from: ${BLOCKABLE_RESOURCES.join(', ')}` }),
});
/** One CSS selector of a list parameter (removeSelectors, hideSelectors). */
export const selector = z.string().max(LIMITS.selectorMaxLength, `selectors must be at most ${LIMITS.selectorMaxLength} characters`);
const urlPattern = z.string().max(LIMITS.urlMaxLength, `blockUrls entries must be at most ${LIMITS.urlMaxLength} characters`);

/** The parameters of `GET /capture` that remove ads, cookie banners and elements, and block resources and URLs (docs/content-filters.md). */
export const contentFilterFields = {
  removeAds: booleanParam('removeAds', false, 'Remove ads.'),
  removeCookieBanners: booleanParam('removeCookieBanners', false, 'Remove cookie consent banners.'),
  removeSelectors: listParam('removeSelectors', selector, LIMITS.listMaxEntries, 'Comma-separated CSS selectors of elements to remove.'),
  blockResources: listParam(
    'blockResources',
    blockedResource,
    BLOCKABLE_RESOURCES.length,
    `Comma-separated resource types to block, from: ${BLOCKABLE_RESOURCES.join(', ')}.`,
  ),
  blockUrls: listParam(
    'blockUrls',
    urlPattern,
    LIMITS.listMaxEntries,
    'Comma-separated URLs or patterns to block; * matches any characters.',
  ),
};

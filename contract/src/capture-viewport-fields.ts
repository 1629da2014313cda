import { DEVICE_NAMES } from './devices.js';
import { LIMITS } from './limits.js';
import { booleanParam, enumParam, numberParam, optionalNumberParam, stringParam } from './params.js';

export const THEMES = ['light', 'dark', 'auto'] as const;

/** The parameters of `GET /capture` that size the browser window (device, viewport, scale, theme) and choose the part of the page taken. */
export const captureViewportFields = {
  scaleFactor: optionalNumberParam(
    'scaleFactor',
    { min: LIMITS.scaleFactorMin, max: LIMITS.scaleFactorMax },
    'Device scale factor 0.1 to 3.0; overrides the preset scale.',
    1,
  ),

  device: enumParam(
    'device',
    DEVICE_NAMES,
    'desktop',
    'A device ID or legacy category (desktop, mobile, tablet). A specific device sets viewport, scale factor and user agent.',
  ),
  viewportWidth: optionalNumberParam(
    'viewportWidth',
    { min: LIMITS.viewportMin, max: LIMITS.viewportMax, unit: 'pixels' },
    'Viewport width in CSS pixels; overrides the preset width.',
    1920,
  ),
  viewportHeight: optionalNumberParam(
    'viewportHeight',
    { min: LIMITS.viewportMin, max: LIMITS.viewportMax, unit: 'pixels' },
    'Viewport height in CSS pixels; overrides the preset height.',
    1080,
  ),
  theme: enumParam('theme', THEMES, 'auto', 'Emulated prefers-color-scheme: light, dark or auto (the page decides).'),

  fullPage: booleanParam('fullPage', false, 'Capture the whole page including below the fold; ignored for pdf (always true).'),
  fullPageScroll: booleanParam(
    'fullPageScroll',
    false,
    'Scroll through the page first so lazy-loaded content loads, at a fixed pace; a growing page (infinite list) is scrolled until its height stays the same, fullPageScrollDuration passes or the full-page height budget is reached (data.page.stillGrowing says when it was still growing); ignored for pdf (always true).',
  ),
  fullPageScrollDuration: numberParam(
    'fullPageScrollDuration',
    { min: 0, max: LIMITS.scrollDurationMaxMs, unit: 'ms' },
    1000,
    'Longest time to scroll, in ms (a page that stops growing ends sooner; a longer duration never loads less); ignored for pdf (always 1000).',
  ),
  clipSelector: stringParam('clipSelector', LIMITS.selectorMaxLength, 'CSS selector; capture only that element.'),
};

import type { CDPSession } from 'puppeteer';

/**
 * The generic font families per script, as full Chromium sets them on Linux from its locale
 * settings: chromium-headless-shell has no such preferences, so a page in zh-Hans, zh-Hant or ko
 * drew Han text in Noto Sans CJK JP (Japanese glyph forms) and the Latin text of CJK pages in a
 * serif (issue #30: 8–12 % of such a page's pixels differed from full Chromium's).
 *
 * Measured here against /usr/bin/chromium (tests/integration/capture-fonts.test.ts): with these
 * entries the standard, sans-serif and serif text of zh-Hans, zh-Hant, ja and ko pages is pixel
 * for pixel full Chromium's. Only Japanese gets a CJK monospace: full Chromium keeps the system
 * monospace for the other three. Latin pages keep the defaults, which already match.
 */
const cjk = (region: 'SC' | 'TC' | 'JP' | 'KR', monospace = false) => ({
  standard: `Noto Sans CJK ${region}`,
  sansSerif: `Noto Sans CJK ${region}`,
  serif: `Noto Serif CJK ${region}`,
  ...(monospace ? { fixed: `Noto Sans Mono CJK ${region}` } : {}),
});

const FONT_FAMILIES = {
  fontFamilies: {},
  forScripts: [
    { script: 'Hans', fontFamilies: cjk('SC') },
    { script: 'Hant', fontFamilies: cjk('TC') },
    { script: 'Jpan', fontFamilies: cjk('JP', true) },
    { script: 'Hang', fontFamilies: cjk('KR') },
  ],
};

/** Sessions whose page has the families: Chromium takes them once per page ("can only be set once"). */
const applied = new WeakSet<CDPSession>();

/** Sets the per-script generic families on the slot's page, once (they are kept across its navigations). */
export async function applyFontFamilies(session: CDPSession): Promise<void> {
  if (applied.has(session)) return;
  await session.send('Page.setFontFamilies', FONT_FAMILIES);
  applied.add(session);
}

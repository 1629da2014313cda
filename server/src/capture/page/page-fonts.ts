import type { CDPSession } from 'puppeteer-core';
import { ignoreBecause } from '../../ignore-error.js';

/**
 * The generic font families as full Chromium sets them on Linux from its locale settings:
 * chromium-headless-shell has no such preferences (docs/capture-fidelity.md; without them 8–12 % of
 * the pixels of a CJK page differed from full Chromium's). Read from both browsers here with
 * CSS.getPlatformFontsForNode:
 * - every page: monospace is fontconfig's "Monospace" (DejaVu Sans Mono) in full Chromium, Liberation
 *   Mono (Courier New's stand-in) in the shell;
 * - zh-Hans, zh-Hant, ja and ko pages: the default, sans-serif, cursive and fantasy families are Noto
 *   Sans CJK SC/TC/JP/KR (its Latin letters too, not a serif), serif is Noto Serif CJK of the same
 *   region; the shell drew all of them in Liberation Serif or Sans with Han from Noto Sans CJK JP
 *   (Japanese glyph forms); Japanese monospace is Noto Sans Mono CJK JP.
 * With these entries the test pages of tests/integration/capture-fidelity-render.test.ts are pixel
 * for pixel full Chromium's. Still different: Han characters inside monospace text of a zh or ko
 * page (the shell's fallback for them ignores the page language and takes the JP font).
 */
const cjk = (region: 'SC' | 'TC' | 'JP' | 'KR') => ({
  standard: `Noto Sans CJK ${region}`,
  sansSerif: `Noto Sans CJK ${region}`,
  serif: `Noto Serif CJK ${region}`,
  cursive: `Noto Sans CJK ${region}`,
  fantasy: `Noto Sans CJK ${region}`,
  ...(region === 'JP' ? { fixed: 'Noto Sans Mono CJK JP' } : {}),
});

const FONT_FAMILIES = {
  fontFamilies: { fixed: 'Monospace' },
  forScripts: [
    { script: 'Hans', fontFamilies: cjk('SC') },
    { script: 'Hant', fontFamilies: cjk('TC') },
    { script: 'Jpan', fontFamilies: cjk('JP') },
    { script: 'Hang', fontFamilies: cjk('KR') },
  ],
};

/** Sessions whose page has the families: Chromium takes them once per page ("can only be set once"). */
const applied = new WeakSet<CDPSession>();

/** Sets the per-script generic families on the slot's page, once (they are kept across its navigations). */
export async function applyFontFamilies(session: CDPSession): Promise<void> {
  if (applied.has(session)) return;
  applied.add(session);
  // A browser without the command (or a page that has families already) keeps its own fonts: a
  // difference in glyphs, never a failed capture.
  await session.send('Page.setFontFamilies', FONT_FAMILIES).catch(ignoreBecause('a browser without the command keeps its own fonts'));
}

import { INSIGHT_LIMITS, type PageMetadata } from '@daguerre/contract';
import type { CDPSession, HTTPResponse, Page } from 'puppeteer-core';
import { articleMetadata, NO_ARTICLE_METADATA } from './article-metadata.js';
import { readArticleSignals } from './article-signals.js';
import type { PageEventLog } from '../page/page-events.js';
import { ignoreBecause } from '../../ignore-error.js';

/**
 * The page's metadata (docs/page-insight.md, `metadata=true`): what its markup declares (title,
 * description, canonical URL, language, OpenGraph, Twitter card, icons), the article's own title,
 * authors and dates (article-metadata.ts), the fonts Chromium actually drew its text with, and the
 * main document's answer (status, headers without cookies, redirects). The timings and the file's
 * sha256 are added by the service, which sees the final file.
 */
export type PageMetadataParts = Omit<PageMetadata, 'timings' | 'sha256'> & {
  /** ms from navigation start to the end of the load event (Navigation Timing), when it ended. */
  loadMs: number | null;
};

/** Text elements sampled for fonts: one per distinct (font, weight, style, script) is enough. */
const FONT_SAMPLES = 40;

interface DeclaredMetadata {
  title: string;
  description: string | null;
  canonicalUrl: string | null;
  language: string | null;
  openGraph: Record<string, string>;
  twitter: Record<string, string>;
  icons: PageMetadata['icons'];
  loadMs: number | null;
}

/** Runs in the page: reads the head. URLs come out absolute (the browser resolves href). */
function readDeclared(maxIcons: number): DeclaredMetadata {
  // Anywhere in the document: a stray element in the head makes the parser put later <meta>s in the body.
  const meta = (selector: string) => document.querySelector<HTMLMetaElement>(selector)?.content?.trim() || null;
  const prefixed = (prefix: string) => {
    const found: Record<string, string> = {};
    for (const element of document.querySelectorAll<HTMLMetaElement>('meta[property], meta[name]')) {
      const key = (element.getAttribute('property') || element.getAttribute('name') || '').trim();
      if (!key.toLowerCase().startsWith(prefix)) continue;
      const name = key.slice(prefix.length);
      // The first value of a repeated property (og:image twice) is the main one.
      if (name && !(name in found) && element.content) found[name] = element.content.trim();
    }
    return found;
  };
  const openGraph = prefixed('og:');
  const twitter = prefixed('twitter:');
  const canonical = document.querySelector<HTMLLinkElement>('link[rel~="canonical" i][href]');
  const icons: DeclaredMetadata['icons'] = [];
  const seen = new Set<string>();
  for (const link of document.querySelectorAll<HTMLLinkElement>('link[rel][href]')) {
    const rel = link.rel.toLowerCase();
    if (!/(^|\s)(icon|apple-touch-icon|apple-touch-icon-precomposed|mask-icon)(\s|$)/.test(rel)) continue;
    // Enough to sort and keep the largest; the same icon declared twice is listed once.
    if (icons.length >= maxIcons * 4) break;
    const icon = { rel, href: link.href, sizes: link.getAttribute('sizes'), type: link.getAttribute('type') };
    const key = JSON.stringify(icon);
    if (!seen.has(key)) icons.push(icon);
    seen.add(key);
  }
  const navigation = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
  return {
    title: document.title,
    description: meta('meta[name="description" i]') ?? openGraph.description ?? twitter.description ?? null,
    canonicalUrl: canonical ? canonical.href : null,
    language: document.documentElement.getAttribute('lang')?.trim() || null,
    openGraph,
    twitter,
    icons,
    loadMs: navigation && navigation.loadEventEnd > 0 ? Math.round(navigation.loadEventEnd) : null,
  };
}

/** An icon's largest declared side in px: sizes="any" (scalable) is larger than any, no sizes is 0. */
function declaredSize(sizes: string | null): number {
  let largest = 0;
  for (const size of (sizes ?? '').toLowerCase().split(/\s+/)) {
    if (size === 'any') return Number.POSITIVE_INFINITY;
    const match = /^(\d+)x(\d+)$/.exec(size);
    if (match) largest = Math.max(largest, +match[1]!, +match[2]!);
  }
  return largest;
}

/**
 * Icons largest first by their declared sizes (what a client wants first is the sharpest one),
 * icons that declare none after the sized ones, page order among equals; at most iconEntries.
 */
export function largestIconsFirst(icons: PageMetadata['icons']): PageMetadata['icons'] {
  return icons
    .map((icon, index) => ({ icon, index, size: declaredSize(icon.sizes) }))
    .sort((a, b) => (a.size === b.size ? a.index - b.index : b.size > a.size ? 1 : -1))
    .slice(0, INSIGHT_LIMITS.iconEntries)
    .map(({ icon }) => icon);
}

/**
 * Runs in the page: one visible element per distinct font setting and script, whose own text
 * nodes Chromium then reports the fonts of. Sampling keeps the cost flat on long pages.
 */
const FONT_SAMPLE_SCRIPT = `(() => {
  const samples = [];
  const seen = new Set();
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node && samples.length < ${FONT_SAMPLES}; node = walker.nextNode()) {
    const text = node.nodeValue;
    if (!text || !text.trim()) continue;
    const element = node.parentElement;
    if (!element || element.closest('script,style,noscript,template')) continue;
    const style = getComputedStyle(element);
    if (style.visibility !== 'visible' || style.display === 'none') continue;
    const script = /[^\\u0000-\\u024f\\u2000-\\u206f]/.test(text) ? 'other' : 'latin';
    const key = style.fontFamily + '|' + style.fontWeight + '|' + style.fontStyle + '|' + script;
    if (seen.has(key)) continue;
    if (element.getClientRects().length === 0) continue;
    seen.add(key);
    samples.push(element);
  }
  return samples;
})()`;

/** Fonts Chromium used for the sampled text (CSS.getPlatformFontsForNode), most glyphs first. */
async function fontsUsed(session: CDPSession): Promise<PageMetadata['fonts']> {
  const group = 'daguerre-fonts';
  await session.send('DOM.enable');
  await session.send('CSS.enable');
  try {
    // requestNode needs the document known to this session's DOM agent.
    await session.send('DOM.getDocument', { depth: 0 });
    const { result } = await session.send('Runtime.evaluate', { expression: FONT_SAMPLE_SCRIPT, objectGroup: group, returnByValue: false });
    if (!result.objectId) return [];
    const { result: properties } = await session.send('Runtime.getProperties', { objectId: result.objectId, ownProperties: true });
    const elements = properties.filter((p) => /^\d+$/.test(p.name) && p.value?.objectId).map((p) => p.value!.objectId!);
    const glyphs = new Map<string, { glyphs: number; webFont: boolean }>();
    await Promise.all(
      elements.map(async (objectId) => {
        const { nodeId } = await session.send('DOM.requestNode', { objectId });
        if (!nodeId) return;
        const { fonts } = await session.send('CSS.getPlatformFontsForNode', { nodeId });
        for (const font of fonts) {
          const entry = glyphs.get(font.familyName) ?? { glyphs: 0, webFont: false };
          entry.glyphs += font.glyphCount;
          entry.webFont ||= font.isCustomFont;
          glyphs.set(font.familyName, entry);
        }
      }),
    );
    await session.send('Runtime.releaseObjectGroup', { objectGroup: group });
    return [...glyphs.entries()]
      .map(([family, entry]) => ({ family, glyphs: entry.glyphs, webFont: entry.webFont }))
      .sort((a, b) => b.glyphs - a.glyphs)
      .slice(0, INSIGHT_LIMITS.listedEntries);
  } finally {
    // The session outlives this capture (pooled slot): its agents go back to off.
    await session.send('CSS.disable').catch(ignoreBecause('the session may be gone with its page'));
    await session.send('DOM.disable').catch(ignoreBecause('the session may be gone with its page'));
  }
}

/** The main document's headers without cookies: Set-Cookie never leaves the service. */
function headersWithoutCookies(response: HTTPResponse): Record<string, string> {
  return Object.fromEntries(
    Object.entries(response.headers()).filter(([name]) => name.toLowerCase() !== 'set-cookie' && name.toLowerCase() !== 'set-cookie2'),
  );
}

export async function readPageMetadata(
  page: Page,
  session: CDPSession,
  response: HTTPResponse | null,
  events: PageEventLog,
  redirects: PageMetadata['redirects'],
): Promise<PageMetadataParts> {
  // Metadata never fails a capture: what a page's broken DOM APIs (or CDP) would not give stays empty.
  const [declared, fonts, signals] = await Promise.all([
    page.evaluate(readDeclared, INSIGHT_LIMITS.iconEntries).catch((): DeclaredMetadata => ({
      title: '',
      description: null,
      canonicalUrl: null,
      language: null,
      openGraph: {},
      twitter: {},
      icons: [],
      loadMs: null,
    })),
    fontsUsed(session).catch((): PageMetadata['fonts'] => []),
    readArticleSignals(page),
  ]);
  let article = NO_ARTICLE_METADATA;
  try {
    article = signals ? articleMetadata(signals) : NO_ARTICLE_METADATA;
  } catch {
    // A page's odd markup leaves the article fields empty; it never fails the capture.
  }
  return {
    ...declared,
    ...article,
    authors: article.authors.slice(0, INSIGHT_LIMITS.authorEntries),
    icons: largestIconsFirst(declared.icons),
    language: declared.language ?? response?.headers()['content-language']?.split(',')[0]?.trim() ?? null,
    fonts,
    httpStatus: response ? response.status() : null,
    httpHeaders: response ? headersWithoutCookies(response) : {},
    redirects,
    consoleErrors: events.consoleErrors,
    failedRequests: events.failedRequests,
  };
}

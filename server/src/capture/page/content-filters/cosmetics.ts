import { Request, type FiltersEngine } from '@ghostery/adblocker';
import type { Frame, Page } from 'puppeteer-core';

/*
 * Page-side code is kept as plain JavaScript source: functions handed to page.evaluate are
 * serialized with whatever the TypeScript loader added to them (tsx wraps named functions in a
 * `__name` helper that child frames do not define).
 */

/** Classes, ids and link targets of a document: the engine picks the generic hiding rules that can match them. */
const COLLECT_DOM_FEATURES = `(() => {
  const classes = new Set();
  const ids = new Set();
  const hrefs = new Set();
  const elements = document.querySelectorAll('[id],[class],a[href]');
  const limit = Math.min(elements.length, 50000);
  for (let i = 0; i < limit; i++) {
    const element = elements[i];
    if (element.id) ids.add(element.id);
    if (element.classList) for (const name of element.classList) classes.add(name);
    if (element.tagName === 'A' && element.href && hrefs.size < 5000) hrefs.add(element.href);
  }
  return { classes: [...classes], ids: [...ids], hrefs: [...hrefs] };
})()`;

/**
 * Adds the rules to the document as a constructed stylesheet, which the page's
 * Content-Security-Policy does not govern (a <style> element is the fallback). Rules are inserted
 * one by one: lists carry selectors Chromium does not parse (other blockers' syntax), and in a
 * stylesheet text one of them with an unbalanced bracket or quote would swallow the rules after it.
 */
const ADD_RULES = `((rules) => {
  let sheet;
  try {
    sheet = new CSSStyleSheet();
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  } catch (error) {
    const style = document.createElement('style');
    (document.head || document.documentElement).appendChild(style);
    sheet = style.sheet;
  }
  let added = 0;
  for (const rule of rules) {
    try { sheet.insertRule(rule, sheet.cssRules.length); added++; } catch (error) { /* a selector this browser does not know */ }
  }
  return added;
})`;

export interface FramePageInfo {
  url: string;
  hostname: string;
  domain: string;
}

/** Long data: URLs (inline html) are shortened: the engine only needs to know there is no host. */
export function pageInfo(url: string): FramePageInfo {
  const short = url.startsWith('data:') ? 'data:' : url;
  const request = Request.fromRawDetails({ url: short, type: 'main_frame' });
  return { url: short, hostname: request.hostname, domain: request.domain };
}

/** The URL of the top-level document a frame belongs to (third-party checks and $domain= options are relative to it). */
export function topLevelUrl(frame: Frame | null, fallback: string): string {
  let current = frame;
  while (current?.parentFrame()) current = current.parentFrame();
  return current?.url() || fallback;
}

/**
 * Splits the engine's stylesheet into one rule per selector. The engine writes groups of up to
 * 1 024 selectors, one per line, each line but the group's last ending with a comma, the last one
 * carrying the declarations (`selector { display: none !important; }`); in a group, one selector
 * Chromium does not know would void the other 1 023. Selectors may contain braces themselves
 * (attribute values), so the declaration block is taken from the end of the line.
 */
export function splitStylesheet(stylesheet: string): string[] {
  const rules: string[] = [];
  let pending: string[] = [];
  for (const line of stylesheet.split('\n')) {
    if (line.trim() === '') continue;
    const last = / \{ ([^{}]*) \}$/.exec(line);
    if (!last) {
      pending.push(line.endsWith(',') ? line.slice(0, -1) : line);
      continue;
    }
    pending.push(line.slice(0, last.index));
    for (const selector of pending) if (selector.trim()) rules.push(`${selector} { ${last[1]!.trim()} }`);
    pending = [];
  }
  return rules;
}

/** Frames worth filtering: the page and its http(s) subframes, at most `limit` of them. */
export function framesOf(page: Page, limit = 16): Frame[] {
  const main = page.mainFrame();
  const children = page.frames().filter((frame) => frame !== main && !frame.detached && /^https?:/.test(frame.url()));
  return [main, ...children.slice(0, limit - 1)];
}

export interface CosmeticResult {
  /** Frames that received a stylesheet. */
  frames: number;
  /** Hiding rules Chromium accepted, over all frames. */
  rules: number;
}

/**
 * Applies an engine's element-hiding rules to the frames of a loaded page: the rules for the
 * frame's host, the generic rules that can match its classes, ids and links, and (unless the list
 * says otherwise for that site) the generic base rules, unless the document-start stylesheet has
 * them already. Frames that went away meanwhile are skipped.
 */
export async function applyCosmeticFilters(
  page: Page,
  engine: FiltersEngine,
  options: { baseRulesApplied?: boolean } = {},
): Promise<CosmeticResult> {
  const result: CosmeticResult = { frames: 0, rules: 0 };
  await Promise.all(
    framesOf(page).map(async (frame) => {
      try {
        const info = pageInfo(frame.url());
        const dom = (await frame.evaluate(COLLECT_DOM_FEATURES)) as { classes: string[]; ids: string[]; hrefs: string[] };
        const { styles } = engine.getCosmeticsFilters({
          ...info,
          ...dom,
          // Already in every document since its start (document-start.ts): not inserted twice.
          getBaseRules: !options.baseRulesApplied,
          getInjectionRules: false,
          getExtendedRules: false,
          getRulesFromDOM: true,
          getRulesFromHostname: true,
        });
        if (!styles) return;
        const rules = splitStylesheet(styles);
        if (rules.length === 0) return;
        const added = (await frame.evaluate(`${ADD_RULES}(${JSON.stringify(rules)})`)) as number;
        result.frames += 1;
        result.rules += added;
      } catch {
        // A frame that navigated or closed meanwhile has nothing left to hide.
      }
    }),
  );
  return result;
}

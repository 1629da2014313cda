import { Request, type FiltersEngine, type RequestType } from '@ghostery/adblocker';
import type { HTTPRequest, Page } from 'puppeteer-core';
import type { RequestFilter } from '../page-setup.js';
import { documentStartStyles, type DocumentStartRegistry } from './document-start.js';
import { applyCosmeticFilters, framesOf, topLevelUrl, type CosmeticResult } from './cosmetics.js';

/** Blocked URLs remembered per capture, to collapse the elements that asked for them. */
const MAX_REMEMBERED = 2_000;

/**
 * Hides the elements whose resource was blocked (frames, images, embeds): a blocked iframe would
 * otherwise show Chromium's "blocked" error page, a blocked image its broken-image box.
 */
const COLLAPSE_BLOCKED = `((urls) => {
  const blocked = new Set(urls);
  let collapsed = 0;
  for (const element of document.querySelectorAll('iframe,frame,img,embed,object,input[type=image],video,audio')) {
    const source = element.currentSrc || element.src || element.data || '';
    if (source && blocked.has(source.split('#')[0])) {
      element.style.setProperty('display', 'none', 'important');
      collapsed++;
    }
  }
  return collapsed;
})`;

/** Chromium's resource types that the engine knows under another name. */
function requestType(request: HTTPRequest): RequestType {
  const type = request.resourceType();
  // The renderer never filters the page's own document, so a document here is a subframe.
  return type === 'document' ? 'sub_frame' : type;
}

export interface AdBlockReport extends CosmeticResult {
  /** Requests the network filters blocked. */
  blocked: number;
  /** Elements collapsed because their resource was blocked. */
  collapsed: number;
}

/**
 * One capture's ad blocking: a request filter for the renderer (network rules of the ad and
 * tracker lists, with their exceptions) and, once the page has loaded, the lists' element-hiding
 * rules (from the document's start, and once it has loaded for the rules that depend on its
 * classes and ids) plus the collapse of what was blocked. What is installed in the page before it
 * loads is removed after the capture (DocumentStartRegistry).
 */
export class AdBlockSession {
  private readonly blockedUrls = new Set<string>();
  private blockedCount = 0;
  private baseRulesApplied = false;

  constructor(private readonly engine: FiltersEngine) {}

  readonly requestFilter: RequestFilter = (request) => {
    const url = request.url();
    if (!url.startsWith('http:') && !url.startsWith('https:')) return false;
    const sourceUrl = topLevelUrl(request.frame(), url);
    const details = Request.fromRawDetails({
      url,
      sourceUrl: sourceUrl.startsWith('data:') ? 'data:' : sourceUrl,
      type: requestType(request),
    });
    if (details.type === 'other') details.guessTypeOfRequest();
    // A redirect rule (serve a stub instead) is honoured as a block: the capture only needs the ad gone.
    const { match } = this.engine.match(details);
    if (match) {
      this.blockedCount += 1;
      if (this.blockedUrls.size < MAX_REMEMBERED) this.blockedUrls.add(url.split('#')[0]!);
    }
    return match;
  };

  /** Element hiding from the document's start: the ad slots the lists know never show. */
  async beforeNavigate(registry: DocumentStartRegistry, targetUrl: string): Promise<void> {
    const styles = documentStartStyles(this.engine, targetUrl);
    if (!styles) return;
    await registry.addScript(styles);
    this.baseRulesApplied = true;
  }

  /** Element hiding (the rules that depend on the loaded document) and collapse, on the loaded page. */
  async afterLoad(page: Page): Promise<AdBlockReport> {
    const cosmetic = await applyCosmeticFilters(page, this.engine, { baseRulesApplied: this.baseRulesApplied });
    let collapsed = 0;
    if (this.blockedUrls.size > 0) {
      const urls = JSON.stringify([...this.blockedUrls]);
      const counts = await Promise.all(framesOf(page).map((frame) => frame.evaluate(`${COLLAPSE_BLOCKED}(${urls})`).catch(() => 0)));
      collapsed = counts.reduce((sum: number, n) => sum + Number(n), 0);
    }
    return { ...cosmetic, blocked: this.blockedCount, collapsed };
  }
}

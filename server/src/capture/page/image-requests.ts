import type { HTTPRequest, Page } from 'puppeteer-core';

/**
 * The document's picture requests under way (<img>, CSS backgrounds), heard from the start of the
 * capture. A full page waits for them before it is measured and taken (full-page-settle.ts): a
 * picture still arriving is drawn as an empty box, and one without a size makes the page taller
 * once it arrives, below the part taken.
 *
 * The page itself cannot tell them apart: a loading=lazy image still waiting to come near the
 * viewport and one already being fetched are both `complete === false` with no `currentSrc`
 * (measured in Chromium here). Only the network knows which pictures are on their way.
 */
export interface ImageRequests {
  /** Resolves once no picture request is under way (true), or at `until`, epoch ms (false). */
  idle(until: number): Promise<boolean>;
  /**
   * What happened since the last call: how many picture requests started (a picture whose load added
   * another one), and the URLs of those that arrived (the late ones, to decode before the capture).
   */
  since(): { started: number; arrived: string[] };
  stop(): void;
}

/** Late pictures decoded before a capture, at most: past it they are decoded as they are drawn. */
const MAX_ARRIVED = 200;

export function watchImageRequests(page: Page): ImageRequests {
  const pending = new Set<HTTPRequest>();
  let started = 0;
  let arrived: string[] = [];
  let wake: (() => void) | undefined;
  // Inline data is no request under way (Chromium may still report it): it is there at once. Only
  // the document's own pictures count: a frame's (an advertisement rotating its pictures) would keep
  // every capture waiting to its bound, and a frame's pictures never change the page's height.
  const isPicture = (request: HTTPRequest) =>
    request.resourceType() === 'image' && !request.url().startsWith('data:') && request.frame() === page.mainFrame();
  const onRequest = (request: HTTPRequest) => {
    if (!isPicture(request)) return;
    pending.add(request);
    started += 1;
  };
  const onSettled = (request: HTTPRequest) => {
    if (!pending.delete(request)) return;
    if (arrived.length < MAX_ARRIVED) arrived.push(request.url());
    if (pending.size === 0) wake?.();
  };
  page.on('request', onRequest);
  page.on('requestfinished', onSettled);
  page.on('requestfailed', onSettled);
  return {
    async idle(until) {
      if (pending.size === 0) return true;
      const left = until - Date.now();
      if (left <= 0) return false;
      let timer: NodeJS.Timeout | undefined;
      const quiet = await new Promise<boolean>((resolve) => {
        wake = () => resolve(true);
        timer = setTimeout(() => resolve(false), left);
      });
      clearTimeout(timer);
      wake = undefined;
      return quiet;
    },
    since() {
      const news = { started, arrived };
      started = 0;
      arrived = [];
      return news;
    },
    stop() {
      page.off('request', onRequest);
      page.off('requestfinished', onSettled);
      page.off('requestfailed', onSettled);
      wake?.();
    },
  };
}

import type { Page } from 'puppeteer-core';
import type { ImageRequests } from '../page/image-requests.js';
import { documentSize } from '../page/page-actions.js';
import { ignoreBecause } from '../../ignore-error.js';

/**
 * Rounds of waiting at most: a picture whose arrival adds another one (a gallery that fills itself
 * in, a script that appends the next part when an image loads) is followed this far.
 */
const SETTLE_ROUNDS = 3;

export interface DocumentSize {
  width: number;
  height: number;
}

/**
 * Lays the page out once more after its late pictures settle, then measures it for a full-page
 * capture (docs/capture-fidelity.md, "Late pictures and pages that change while they are taken").
 * A picture still arriving when the page is taken is drawn as an empty box; one without a declared
 * size makes the page taller when it arrives, after the height was read, so the bottom of the page
 * was left out of the image.
 *
 * Each round waits for the picture requests under way (`images`, heard since the capture began),
 * then, in the page, for eager images still loading (a request started before anyone listened),
 * decodes the pictures that came late, waits for web fonts and, after late pictures, two frames,
 * and measures. A round that started new pictures is followed by another. Never past `until`
 * (epoch ms): what has not arrived by then is captured as it is, and the quality report names it
 * (imagesNotLoaded). loading=lazy images far from the viewport are not loaded here:
 * fullPageScroll is for those.
 */
export async function settleLayout(page: Page, images: ImageRequests | undefined, until: number): Promise<DocumentSize> {
  // What arrived before this point was laid out and drawn long since.
  images?.since();
  let late: string[] = [];
  for (let round = 1; ; round++) {
    const quiet = images ? await images.idle(until) : true;
    late.push(...(images?.since().arrived ?? []));
    const settled = await page
      .evaluate(settleInPage, late, Math.max(0, until - Date.now()))
      .catch(ignoreBecause('a page that broke the DOM APIs this needs is measured as before'));
    // A page that broke the DOM APIs this needs is measured as before.
    if (!settled) return documentSize(page);
    const news = images?.since();
    const more = settled.loading || (news !== undefined && news.started > 0);
    if (!quiet || !more || round >= SETTLE_ROUNDS || Date.now() >= until) return settled.size;
    late = news?.arrived ?? [];
  }
}

/**
 * Runs in the page: the in-page half of settleLayout. `loading` says whether eager pictures are
 * loading again at the end (added meanwhile, by a picture's load event): another round follows.
 */
async function settleInPage(lateUrls: string[], waitMs: number): Promise<{ size: DocumentSize; loading: boolean }> {
  const stop = Date.now() + waitMs;
  const sleep = (ms: number) => new Promise((done) => setTimeout(done, Math.max(0, ms)));
  const bounded = (work: Promise<unknown>) => Promise.race([work, sleep(stop - Date.now())]);
  const arrived = new Set(lateUrls);
  // Eager pictures still loading, and lazy ones whose bytes have arrived (their load event is near).
  const waiting = (image: HTMLImageElement) => !image.complete && (image.loading !== 'lazy' || arrived.has(image.src));
  const loading = Array.from(document.images).filter(waiting);
  await bounded(
    Promise.all(
      loading.map(
        (image) =>
          new Promise((done) => {
            image.addEventListener('load', done, { once: true });
            image.addEventListener('error', done, { once: true });
          }),
      ),
    ),
  );
  // A picture that came late may not be decoded yet when the frame is drawn; one that cannot be
  // decoded is drawn as it is (this runs in the page: no ignoreBecause here).
  const decoding = Array.from(document.images)
    .filter((image) => image.complete && image.naturalWidth > 0 && arrived.has(image.currentSrc))
    .map((image) => image.decode().catch(() => undefined));
  await bounded(Promise.all(decoding));
  if (document.fonts && document.fonts.status !== 'loaded') await bounded(document.fonts.ready);
  // Reading the height lays the page out; a frame more lets what came late be painted too (only
  // then: two frames cost about 35 ms of every full page).
  if (loading.length > 0 || decoding.length > 0) {
    await Promise.race([new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))), sleep(100)]);
  }
  return {
    size: {
      width: Math.max(document.documentElement.scrollWidth, document.body?.scrollWidth ?? 0, window.innerWidth),
      height: Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, window.innerHeight),
    },
    loading: Array.from(document.images).some((image) => !image.complete && image.loading !== 'lazy'),
  };
}

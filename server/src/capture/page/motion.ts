import type { Frame, Page } from 'puppeteer-core';
import { ignoreBecause } from '../../ignore-error.js';

/**
 * reducedMotion's second half (page-control.ts adds the CSS that makes new transitions and
 * animations instant): motion already running when the CSS arrives. Changing transition-duration
 * does not shorten a transition that has started (CSS Transitions, "changes to the duration do not
 * affect running transitions"): a 30 s red→green transition would stay red. Every animation of
 * the document (CSS transitions, CSS animations, Web Animations) is therefore finished through the
 * Web Animations API, so the image shows end states; an endless one cannot finish and is paused
 * at the end of its current iteration. Carousels driven by timers are stopped through their
 * libraries' own APIs where one is found on the page.
 */
function finishMotionInDocument(): number {
  let finished = 0;
  for (const animation of document.getAnimations()) {
    try {
      const timing = animation.effect?.getComputedTiming();
      if (timing && timing.endTime === Infinity) {
        // Endless (iterations: Infinity): stop at the end of the current iteration.
        const duration = Number(timing.duration) || 0;
        const iteration = Number(timing.currentIteration ?? 0);
        animation.pause();
        animation.currentTime = (Number(timing.delay) || 0) + duration * (iteration + 1) - 0.001;
      } else {
        animation.finish();
      }
      finished += 1;
    } catch {
      // A zero-playback-rate or detached animation: leave it.
    }
  }
  // The carousels of common libraries, found through their own globals or element properties.
  const call = (target: unknown, ...path: string[]) => {
    try {
      let object = target as Record<string, unknown> | undefined;
      for (const name of path.slice(0, -1)) object = object?.[name] as Record<string, unknown> | undefined;
      const method = object?.[path[path.length - 1]!];
      if (typeof method === 'function') (method as () => void).call(object);
    } catch {
      // A library in a state that refuses: nothing more to do.
    }
  };
  for (const element of Array.from(document.querySelectorAll('.swiper, .swiper-container'))) {
    call((element as unknown as { swiper?: unknown }).swiper, 'autoplay', 'stop');
  }
  for (const element of Array.from(document.querySelectorAll('.splide')))
    call((element as unknown as { splide?: unknown }).splide, 'Components', 'Autoplay', 'pause');
  const win = window as unknown as Record<string, unknown>;
  const jquery = win.jQuery as ((selector: string) => Record<string, (...args: unknown[]) => unknown>) | undefined;
  if (typeof jquery === 'function') {
    try {
      const slick = jquery('.slick-initialized');
      if (typeof slick.slick === 'function') slick.slick('slickPause');
      const carousel = jquery('.carousel');
      if (typeof carousel.carousel === 'function') carousel.carousel('pause');
    } catch {
      // Not these libraries after all.
    }
  }
  const bootstrap = win.bootstrap as { Carousel?: { getInstance?: (element: Element) => unknown } } | undefined;
  for (const element of Array.from(document.querySelectorAll('.carousel'))) call(bootstrap?.Carousel?.getInstance?.(element), 'pause');
  const flickity = win.Flickity as { data?: (element: Element) => unknown } | undefined;
  for (const element of Array.from(document.querySelectorAll('.flickity-enabled'))) call(flickity?.data?.(element), 'stopPlayer');
  return finished;
}

async function finishInFrame(frame: Frame): Promise<void> {
  await frame.evaluate(finishMotionInDocument).catch(ignoreBecause('a frame gone meanwhile has no motion left to finish'));
}

/**
 * Finishes the motion of the page and its frames (each frame's document has its own timeline).
 * Cross-origin frames in other processes are reached through puppeteer's frames too.
 */
export async function finishMotion(page: Page): Promise<void> {
  await Promise.all(page.frames().map(finishInFrame));
  // One frame for the finished styles to be applied before the screenshot.
  await page
    .evaluate(() =>
      Promise.race([
        new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))),
        new Promise((done) => setTimeout(done, 100)),
      ]),
    )
    .catch(ignoreBecause('a page that cannot wait a frame is captured as it is'));
}

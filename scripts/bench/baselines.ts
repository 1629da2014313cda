/**
 * The two baselines the service is compared with:
 * A, the "raw floor": the binary the service runs, launched by puppeteer, one page kept open, goto + screenshot;
 * B, capture-website: launches a browser for every capture.
 */
import { rm } from 'node:fs/promises';
import captureWebsite from 'capture-website';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { CHROMIUM_BASE_FLAGS } from '../../server/src/capture/browser/browser-manager.js';
import { makeChromiumProfile, sandboxedLaunchOptions } from '../../server/src/capture/browser/chromium-launch.js';
import { defaultChromiumPath, FULL_CHROMIUM } from '../../server/src/chromium-binaries.js';
import { nowMs } from './stats.js';

/** The raw floor runs the binary the service runs (the headless shell when installed): the floor of that binary. */
export const CHROME_PATH = defaultChromiumPath();
/** The raw baselines get the machine's base flags only, none of the service's tuning. */
export const CHROME_ARGS: readonly string[] = CHROMIUM_BASE_FLAGS;
export const VIEWPORT = { width: 1920, height: 1080 } as const;

export interface RawBrowser {
  browser: Browser;
  page: Page;
  pid: number | undefined;
  version: string;
  close(): Promise<void>;
}

/**
 * `extraArgs`: e.g. --no-sandbox, to measure what Chromium's sandbox costs (docs/security.md).
 * `executablePath`: the binary the service runs (the raw floor), or the full browser for a reference figure.
 */
export async function launchRaw(extraArgs: readonly string[] = [], executablePath = CHROME_PATH): Promise<RawBrowser> {
  const userDataDir = makeChromiumProfile('bench-raw-');
  let browser: Browser | undefined;
  try {
    browser = await puppeteer.launch({ ...sandboxedLaunchOptions(executablePath, userDataDir), args: [...CHROME_ARGS, ...extraArgs] });
    const page = await browser.newPage();
    await page.setViewport(VIEWPORT);
    const version = await browser.version();
    const opened = browser;
    return {
      browser: opened,
      page,
      pid: opened.process()?.pid,
      version,
      async close() {
        try {
          await opened.close();
        } finally {
          await rm(userDataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (e) {
    await browser?.close().catch(() => undefined);
    await rm(userDataDir, { recursive: true, force: true });
    throw e;
  }
}

/** goto(load) + viewport PNG on the already open page. */
export async function rawCapture(page: Page, url: string): Promise<{ ms: number; png: Uint8Array }> {
  const start = nowMs();
  await page.goto(url, { waitUntil: 'load', timeout: 60_000 });
  const png = await page.screenshot({ type: 'png' });
  return { ms: nowMs() - start, png };
}

/**
 * In-page script (a string, so the bundler's helpers cannot leak into it): scrolls to the bottom in
 * viewport-high steps spread over `durationMs`, waits (at most 10 s) until every image has loaded or
 * failed, scrolls back to the top and returns how many images loaded.
 */
function scrollScript(durationMs: number): string {
  return `(async () => {
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const step = window.innerHeight;
    const bottom = Math.max(0, document.documentElement.scrollHeight - window.innerHeight);
    const steps = Math.max(1, Math.ceil(bottom / step));
    for (let i = 1; i <= steps; i++) {
      window.scrollTo(0, Math.min(i * step, bottom));
      await sleep(${durationMs} / steps);
    }
    const images = Array.from(document.images);
    const pending = images.filter((img) => !img.complete).map((img) => new Promise((r) => {
      img.addEventListener('load', r, { once: true });
      img.addEventListener('error', r, { once: true });
    }));
    await Promise.race([Promise.all(pending), sleep(10000)]);
    window.scrollTo(0, 0);
    await new Promise((r) => requestAnimationFrame(() => r(null)));
    return images.filter((img) => img.complete && img.naturalWidth > 0).length;
  })()`;
}

/** goto(load), scroll through the page, wait for the images, back to the top, full-page PNG. */
export async function rawScrollCapture(
  page: Page,
  url: string,
  scrollMs = 1_000,
): Promise<{ ms: number; png: Uint8Array; imagesLoaded: number }> {
  const start = nowMs();
  await page.goto(url, { waitUntil: 'load', timeout: 60_000 });
  const loaded: unknown = await page.evaluate(scrollScript(scrollMs));
  const png = await page.screenshot({ type: 'png', fullPage: true });
  return { ms: nowMs() - start, png, imagesLoaded: typeof loaded === 'number' ? loaded : -1 };
}

/**
 * capture-website with a fresh browser per capture. scaleFactor 1 so that it renders the same
 * 1920×1080 pixels as the others (its default is 2); its own wait (networkidle2) is kept.
 */
export async function captureWebsiteOnce(url: string): Promise<{ ms: number; png: Uint8Array }> {
  // Through the same sandboxing wrapper as every Chromium here (docs/security.md): as root, Chromium
  // refuses to start with its sandbox on, and --no-sandbox is not used anywhere.
  const userDataDir = makeChromiumProfile('bench-cw-');
  const start = nowMs();
  try {
    const png = await captureWebsite.buffer(url, {
      width: VIEWPORT.width,
      height: VIEWPORT.height,
      scaleFactor: 1,
      type: 'png',
      blockAds: false,
      // capture-website drives the full browser, as its users run it.
      launchOptions: { ...sandboxedLaunchOptions(FULL_CHROMIUM, userDataDir), args: [...CHROME_ARGS] },
    });
    return { ms: nowMs() - start, png };
  } finally {
    await rm(userDataDir, { recursive: true, force: true });
  }
}

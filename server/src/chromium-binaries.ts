import { existsSync } from 'node:fs';

/*
 * Which Chromium binaries this machine has. A root module because the configuration's default
 * (CHROME_PATH) and the capture layer's launch both need it, and the configuration sits below
 * the capture layer.
 */

/** Debian's full browser (package chromium): what a raw puppeteer script drives, and the fallback. */
export const FULL_CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's chromium-headless-shell: the same Chromium release's Blink, V8 and Skia without the
 * desktop browser around them. Chromium 156's `--headless=new` is the full browser with a window,
 * toolbar and tab strip that nobody sees, and every navigation lays out and paints them in the
 * browser process. A trace showed about 20–30 ms of browser main-thread time per navigation in
 * View::Layout/View::Paint and toolbar updates, and a capture here is two navigations (the page,
 * then the isolation reset's about:blank, pool-slot.ts). Measured on the bench page, a capture
 * plus its reset: 139 → 82 ms of browser-process CPU, 264 → 227 ms wall (README, "Performance").
 */
export const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';

/** The Chromium the service runs when CHROME_PATH is not set: the headless shell when installed (scripts/setup.sh installs it). */
export function defaultChromiumPath(): string {
  return existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : FULL_CHROMIUM;
}

/** Whether a binary is a headless shell, which takes `--headless` (puppeteer's headless: 'shell') rather than `--headless=new`. */
export function isHeadlessShell(executablePath: string): boolean {
  return /headless[-_]shell$/.test(executablePath);
}

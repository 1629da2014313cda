import { rmSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';
import type { Logger } from 'pino';
import { makeChromiumProfile, removeDeadInstancesProfiles, sandboxedLaunchOptions } from './chromium-launch.js';
import { coalescePipeWrites } from './devtools-pipe-writes.js';
import { ignoreBecause } from '../../ignore-error.js';

/**
 * Flags verified on these machines (known-traps): without the networking ones Chromium floods a
 * closed network. Every Chromium the project starts (service, benchmark baselines, browser tests) uses them.
 */
export const CHROMIUM_BASE_FLAGS: readonly string[] = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const LAUNCH_ARGS = [
  ...CHROMIUM_BASE_FLAGS,
  '--disable-dev-shm-usage',
  '--hide-scrollbars',
  '--mute-audio',
  '--font-render-hinting=none',
  // Local Network Access would block html-mode documents (an opaque, "public" origin) from loading
  // resources on private or loopback addresses, even when the operator allows them
  // (ALLOW_PRIVATE_NETWORK). It never applies to top-level navigations, so it is no network
  // boundary for this service: the egress policy is, whatever the browser would allow.
  // SpareRendererForSitePerProcess: after a navigation Chromium starts a spare renderer process for
  // that navigation's browser context, and throws it away when the next process is wanted in
  // another context. With a warm context per organization (context-pool.ts) the next capture is
  // often another organization's: measured, a renderer process started and killed about every
  // fourth capture, and with four organizations taking turns 3.8–4.2 captures/s became 4.6–4.7
  // sequential and 4.8–5.1 became 5.9–6.4 at concurrency 4 once it was off. The pool keeps its own
  // spare contexts instead, each with its renderer.
  // WebUIOmniboxPopup, WebUIOmniboxAimPopup: Chromium 156 (headless=new is the full browser) gives
  // every window, so every context's page, the omnibox popup's WebUI pages
  // (chrome://omnibox-popup.top-chrome/) in a renderer of their own: about 55 MB each, for a popup a
  // capture never opens. Measured: six renderer processes for three pages, three with them off.
  // One --disable-features flag (Chromium keeps only the last). Site isolation stays on (docs/security.md).
  '--disable-features=LocalNetworkAccessChecks,SpareRendererForSitePerProcess,WebUIOmniboxPopup,WebUIOmniboxAimPopup',
  // The headless shell has no popup blocker: a page's scripted click on a target=_blank link opened
  // a window that loaded its URL before the pool could close it (capture-isolation.test.ts). With
  // this switch it creates no new window at all. The full browser ignores it (its blocker is on).
  '--block-new-web-contents',
  // WebRTC must not open UDP paths around the network policy.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

export interface BrowserManagerOptions {
  executablePath: string;
  /** Relaunch after this many captures to bound memory growth. */
  recycleAfter: number;
  /** CDP calls fail after this long, below the capture deadline so a stuck call cannot outlive it. */
  protocolTimeoutMs: number;
  extraArgs?: string[];
  logger: Logger;
}

/**
 * The one owner of Chromium's life: launch, health, recycle after N captures, relaunch after a
 * crash or disconnect. Everything else asks it for the current browser and never closes it.
 */
export class BrowserManager {
  private browser: Browser | undefined;
  private launching: Promise<Browser> | undefined;
  private userDataDir: string | undefined;
  private capturesSinceLaunch = 0;
  private closed = false;
  private sweptDeadProfiles = false;
  /** Chromium processes still running: the current one and retired ones finishing their captures. */
  private readonly running = new Set<number>();
  /** Bumped on every (re)launch; pooled contexts of an older generation are discarded. */
  generation = 0;
  restarts = 0;
  crashes = 0;

  constructor(private readonly options: BrowserManagerOptions) {}

  async get(): Promise<Browser> {
    if (this.closed) throw new Error('browser manager is closed');
    if (this.browser?.connected) return this.browser;
    this.launching ??= this.launch().finally(() => {
      this.launching = undefined;
    });
    return this.launching;
  }

  private async launch(): Promise<Browser> {
    if (!this.sweptDeadProfiles) {
      // Once per process: profiles of instances killed without a chance to clean up.
      this.sweptDeadProfiles = true;
      const removed = removeDeadInstancesProfiles();
      if (removed.length > 0)
        this.options.logger.warn({ removed: removed.length }, 'removed Chromium profile folders left by dead instances');
    }
    // Each launch has a profile of its own, removed when that Chromium exits: a retired browser
    // still finishing captures keeps its profile while the new one starts.
    const userDataDir = makeChromiumProfile();
    const removeProfile = () => rmSync(userDataDir, { recursive: true, force: true });
    let browser: Browser;
    try {
      browser = await this.launchIn(userDataDir);
    } catch (error) {
      removeProfile();
      throw error;
    }
    // The tab Chromium opens with belongs to no pooled context: its about:blank renderer (about
    // 13 MiB) would stay idle for the browser's whole life. The headless browser stays up without it.
    for (const page of await browser.pages().catch(() => [])) await page.close().catch(ignoreBecause('the tab may have closed already'));
    const chromium = browser.process();
    coalescePipeWrites(chromium);
    if (chromium && chromium.exitCode === null) {
      const pid = chromium.pid;
      if (pid !== undefined) this.running.add(pid);
      chromium.once('exit', () => {
        if (pid !== undefined) this.running.delete(pid);
        removeProfile();
      });
    } else removeProfile();
    this.userDataDir = userDataDir;
    this.generation += 1;
    this.capturesSinceLaunch = 0;
    const generation = this.generation;
    browser.on('disconnected', () => {
      if (this.closed || generation !== this.generation) return;
      this.crashes += 1;
      this.options.logger.warn({ generation }, 'chromium disconnected; it will be relaunched on the next capture');
      this.browser = undefined;
    });
    this.browser = browser;
    this.options.logger.info({ pid: chromium?.pid, generation }, 'chromium launched');
    return browser;
  }

  private launchIn(userDataDir: string): Promise<Browser> {
    return puppeteer.launch({
      ...sandboxedLaunchOptions(this.options.executablePath, userDataDir),
      args: [...LAUNCH_ARGS, ...(this.options.extraArgs ?? [])],
      // Puppeteer turns Chromium's popup blocker off; with it on, a page cannot open windows
      // (target=_blank clicks, window.open) without a user gesture, and a capture has none.
      ignoreDefaultArgs: ['--disable-popup-blocking'],
      protocolTimeout: this.options.protocolTimeoutMs,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  }

  /** Counts a capture; past the recycle threshold the browser is replaced once the caller is done with it. */
  noteCapture(): boolean {
    this.capturesSinceLaunch += 1;
    return this.capturesSinceLaunch >= this.options.recycleAfter;
  }

  /**
   * Recycles the browser: new contexts go to a fresh launch, while captures still running on the
   * old one finish; the context pool closes the old browser when its last context is gone.
   */
  retire(): void {
    if (!this.browser) return;
    this.browser = undefined;
    this.generation += 1;
    this.restarts += 1;
  }

  /** Health: the browser answers a protocol call. */
  async healthy(): Promise<boolean> {
    try {
      const browser = await this.get();
      await browser.version();
      return true;
    } catch {
      return false;
    }
  }

  pid(): number | undefined {
    return this.browser?.process()?.pid;
  }

  /** Every Chromium browser process of this manager still running (the memory watchdog's roots). */
  pids(): number[] {
    return [...this.running];
  }

  async close(): Promise<void> {
    this.closed = true;
    const browser = this.browser ?? (await this.launching?.catch(ignoreBecause('a launch that failed left nothing to close')));
    this.browser = undefined;
    if (browser) {
      await browser.close().catch(ignoreBecause('the browser may have exited already'));
      const proc = browser.process();
      if (proc && proc.exitCode === null) proc.kill('SIGKILL');
    }
    this.cleanupUserDataDir();
  }

  private cleanupUserDataDir() {
    if (this.userDataDir) rmSync(this.userDataDir, { recursive: true, force: true });
    this.userDataDir = undefined;
  }
}

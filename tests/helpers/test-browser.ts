import { chownSync, statSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import puppeteer, { type Browser } from 'puppeteer-core';
import { BrowserManager, CHROMIUM_BASE_FLAGS } from '../../server/src/capture/browser/browser-manager.js';
import { makeChromiumProfile, sandboxedLaunchOptions } from '../../server/src/capture/browser/chromium-launch.js';
import { defaultChromiumPath, FULL_CHROMIUM } from '../../server/src/chromium-binaries.js';

/** The service's owner of Chromium, as the tests that drive it (or the pool) directly make it: this machine's Chromium, recycled after 100 captures. */
export function testBrowserManager(logger: Logger = pino({ level: 'silent' })): BrowserManager {
  return new BrowserManager({ executablePath: defaultChromiumPath(), recycleAfter: 100, protocolTimeoutMs: 20_000, logger });
}

/**
 * A browser for tests that look at pages as a person would, launched as the service launches its
 * own: sandboxed, as the unprivileged Chromium user when the tests run as root. The profile folder
 * is handed to that user (makeChromiumProfile makes one with the right owner).
 */
export async function launchTestBrowser(profile: string): Promise<Browser> {
  if (process.getuid?.() === 0) {
    const owner = statSync(makeChromiumProfile('daguerre-owner-probe-'));
    chownSync(profile, owner.uid, owner.gid);
  }
  return puppeteer.launch({
    ...sandboxedLaunchOptions(process.env.CHROME_PATH ?? FULL_CHROMIUM, profile),
    args: [...CHROMIUM_BASE_FLAGS],
  });
}

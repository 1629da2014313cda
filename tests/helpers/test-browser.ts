import { chownSync, statSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer';
import { CHROMIUM_BASE_FLAGS } from '../../server/src/capture/browser-manager.js';
import { FULL_CHROMIUM, makeChromiumProfile, sandboxedLaunchOptions } from '../../server/src/capture/chromium-launch.js';

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

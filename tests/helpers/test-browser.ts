import puppeteer, { type Browser } from 'puppeteer';
import { CHROMIUM_BASE_FLAGS } from '../../server/src/capture/browser-manager.js';

/**
 * A browser for tests that look at pages as a person would, launched exactly as the dashboard
 * browser test launches its own (the service's CHROMIUM_BASE_FLAGS, a fresh profile).
 */
export async function launchTestBrowser(profile: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
    headless: true,
    userDataDir: profile,
    args: [...CHROMIUM_BASE_FLAGS],
  });
}

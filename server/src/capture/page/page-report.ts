import type { CaptureOptions, PageReport } from '@daguerre/contract';
import type { HTTPResponse, Page } from 'puppeteer-core';
import { documentSize } from './page-actions.js';
import { effectiveViewport } from './page-setup.js';
import { ignoreBecause } from '../../ignore-error.js';

export type { PageReport } from '@daguerre/contract';

/**
 * What a capture saw (docs/capture-fidelity.md): the main document's HTTP status and final URL
 * (url mode), its title, the CSS size of what was captured, whether the image was cut to the
 * budget, whether the wait condition timed out (best attempt) and whether a scrolled page was still
 * growing. Sent as X-Target-Status / X-Final-Url / X-Capture-Truncated and as `data.page` in JSON
 * mode.
 */
export async function pageReport(
  page: Page,
  options: CaptureOptions,
  response: HTTPResponse | null,
  flags: Pick<PageReport, 'truncated' | 'waitTimedOut' | 'stillGrowing' | 'inspectionTimedOut'>,
): Promise<PageReport> {
  const isUrl = options.html === undefined;
  return {
    status: isUrl && response ? response.status() : null,
    finalUrl: isUrl ? withoutCredentials(page.url()) : null,
    title: await page.title().catch(() => ''),
    ...(await capturedSize(page, options)),
    ...flags,
  };
}

/**
 * CSS px of what was captured: the whole document for full page and pdf (also when the image was
 * cut: `truncated` says so), the element for clipSelector, the viewport otherwise.
 */
async function capturedSize(page: Page, options: CaptureOptions): Promise<{ width: number; height: number }> {
  if (options.clipSelector) {
    const element = await page.$(options.clipSelector);
    const box = await element?.boundingBox();
    await element?.dispose().catch(ignoreBecause('a handle whose page is gone needs no disposing'));
    if (box) return { width: Math.round(box.width), height: Math.round(box.height) };
  }
  if (options.fullPage || options.format === 'pdf') {
    const size = await documentSize(page);
    return { width: Math.round(size.width), height: Math.round(size.height) };
  }
  const viewport = effectiveViewport(options);
  return { width: viewport.width, height: viewport.height };
}

/** A URL's user name and password never leave the service, nor in a header (docs/security.md). */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

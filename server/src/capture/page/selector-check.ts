import type { CaptureOptions } from '@daguerre/contract';
import type { Page } from 'puppeteer-core';
import { CaptureError } from '../capture-error.js';
import { invalidSelectors } from './page-actions.js';

/**
 * Checks every selector parameter as CSS before the page is loaded, so that a typo is a quick 400
 * naming the field rather than a wait that runs into the deadline.
 */
export async function assertValidSelectors(page: Page, options: CaptureOptions): Promise<void> {
  const fields: Array<[string, string]> = [
    ...(options.clipSelector ? [['clipSelector', options.clipSelector] as [string, string]] : []),
    ...(options.waitForSelector ? [['waitForSelector', options.waitForSelector] as [string, string]] : []),
    ...(options.removeSelectors ?? []).map((selector) => ['removeSelectors', selector] as [string, string]),
    ...(options.hideSelectors ?? []).map((selector) => ['hideSelectors', selector] as [string, string]),
    ...(options.click ? [['click', options.click] as [string, string]] : []),
    ...(options.scrollIntoView ? [['scrollIntoView', options.scrollIntoView] as [string, string]] : []),
  ];
  const invalid = new Set(
    await invalidSelectors(
      page,
      fields.map(([, selector]) => selector),
    ),
  );
  const problems = fields.filter(([, selector]) => invalid.has(selector));
  if (problems.length === 0) return;
  throw new CaptureError(
    'invalid-selector',
    `Validation failed: ${problems.map(([field, value]) => `${field}: "${value}" is not a valid CSS selector`).join('; ')}`,
    {
      details: problems.map(([field, value]) => ({ field, message: 'not a valid CSS selector', value })),
    },
  );
}

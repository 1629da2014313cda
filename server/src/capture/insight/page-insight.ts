import { createHash } from 'node:crypto';
import type { CaptureOptions, CaptureQuality, PageMetadata } from '@daguerre/contract';
import type { HTTPResponse } from 'puppeteer-core';
import { assertNotBlank, readCaptureQuality, type CapturedFile, type QualityProbe } from './capture-quality.js';
import type { Slot } from '../pool/context-pool.js';
import type { PageEventLog } from '../page/page-events.js';
import { readPageMetadata, type PageMetadataParts } from './page-metadata.js';

/** What the page readers (docs/page-insight.md) add to a capture: the quality report always, the metadata on request. */
export interface PageInsight {
  quality: CaptureQuality;
  metadata?: PageMetadataParts;
}

/**
 * Reads the quality report and (with metadata=true) the metadata of the page just captured, in
 * parallel. failOnBlank turns a blank finding into the caller's 422 here, before anything is charged.
 */
export async function readPageInsight(
  slot: Slot,
  options: CaptureOptions,
  response: HTTPResponse | null,
  file: CapturedFile | Promise<CapturedFile>,
  probe: QualityProbe | Promise<QualityProbe>,
  events: PageEventLog | undefined,
  redirects: PageMetadata['redirects'] = [],
): Promise<PageInsight> {
  const [quality, metadata] = await Promise.all([
    readCaptureQuality(slot.page, { options, probe, file }),
    options.metadata && events ? readPageMetadata(slot.page, slot.session, response, events, redirects) : Promise.resolve(undefined),
  ]);
  assertNotBlank(quality, options);
  return { quality, ...(metadata ? { metadata } : {}) };
}

/**
 * The insight as the answer carries it, once the file is final (after png compaction): the metadata
 * gains the stage timings and the file's sha256.
 */
export function finishInsight(
  insight: PageInsight,
  buffer: Buffer,
  timings: Record<string, number>,
): { quality: CaptureQuality; metadata?: PageMetadata } {
  if (!insight.metadata) return { quality: insight.quality };
  const { loadMs, ...declared } = insight.metadata;
  const metadata: PageMetadata = {
    ...declared,
    timings: { navigation: timings.navigate ?? 0, load: loadMs, wait: timings.wait ?? 0, capture: timings.capture ?? 0 },
    sha256: createHash('sha256').update(buffer).digest('hex'),
  };
  return { quality: insight.quality, metadata };
}

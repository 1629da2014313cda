import type { CaptureQuality, PageMetadata } from '@daguerre/contract';
import type { Response } from 'express';
import { aiResultHeader } from '../services/ai-analysis.js';

/** Longest X-Page-Title, in bytes after escaping. */
const TITLE_HEADER_MAX_BYTES = 256;

/**
 * The page insight of docs/page-insight.md as headers: X-Capture-Quality (ok or warn) and
 * X-Capture-Quality-Findings (the checks that found something, comma-separated) on every capture;
 * with metadata=true the compact form of the metadata for binary answers: X-Capture-Sha256,
 * X-Page-Title (header-safe, percent-encoded like X-Service-AI-Result) and X-Page-Language. The
 * full report is data.quality / data.metadata.
 */
export function setInsightHeaders(
  res: Response,
  insight: { quality?: CaptureQuality | undefined; metadata?: PageMetadata | undefined },
): void {
  if (insight.quality) {
    res.setHeader('X-Capture-Quality', insight.quality.ok ? 'ok' : 'warn');
    const checks = [...new Set(insight.quality.findings.map((finding) => finding.check))];
    if (checks.length > 0) res.setHeader('X-Capture-Quality-Findings', checks.join(','));
  }
  if (insight.metadata) {
    res.setHeader('X-Capture-Sha256', insight.metadata.sha256);
    if (insight.metadata.title) res.setHeader('X-Page-Title', aiResultHeader(insight.metadata.title, TITLE_HEADER_MAX_BYTES).value);
    if (insight.metadata.language && /^[A-Za-z0-9-]{1,35}$/.test(insight.metadata.language))
      res.setHeader('X-Page-Language', insight.metadata.language);
  }
}

/** Text files say their charset (the content formats are UTF-8). */
export function contentTypeOf(mime: string): string {
  return mime.startsWith('text/') ? `${mime}; charset=utf-8` : mime;
}

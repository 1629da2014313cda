import { isContentFormat, type CaptureOptions } from '@daguerre/contract';
import type { Slot } from '../pool/context-pool.js';
import { captureImage } from './capture-image.js';
import { capturePdf } from './capture-pdf.js';
import type { FullPageBudget } from './full-page-plan.js';
import type { ImageRequests } from '../page/image-requests.js';
import { captureContent } from './page-content.js';
import type { RenderResult } from './render-result.js';

export interface OutputLimits {
  fullPageBudget?: FullPageBudget | undefined;
  /** Epoch ms past which a full page waits for nothing more (late pictures, a retake); it is never cut for time. */
  stopBy: number;
  /** The page's picture requests under way, for a full page or an element to wait for (image-requests.ts). */
  images?: ImageRequests | undefined;
  /** ms left for a pdf. */
  pdfTimeoutMs: number;
}

/** The file of one capture, by format: an image, a pdf, or the page's content (docs/page-insight.md). */
export function captureFile(slot: Slot, options: CaptureOptions, limits: OutputLimits): Promise<RenderResult> {
  if (options.format === 'pdf') return capturePdf(slot, options, limits.pdfTimeoutMs);
  if (isContentFormat(options.format)) return captureContent(slot, options);
  return captureImage(slot, options, limits.fullPageBudget, limits.stopBy, limits.images);
}

import { MIME_TYPES, paginatedPdfSettings, type CaptureOptions } from '@daguerre/contract';
import type { PDFOptions } from 'puppeteer-core';
import { CaptureError } from '../capture-error.js';
import type { Slot } from '../pool/context-pool.js';
import { documentSize } from '../page/page-actions.js';
import { effectiveViewport, emulateMedia } from '../page/page-setup.js';
import type { RenderResult } from './render-result.js';

/** A single-page PDF taller than this (CSS px; PDF pages end at 200 in) falls back to paginated A4. */
export const MAX_SINGLE_PDF_HEIGHT_PX = 19_000;

/** Puppeteer's options for the paginated layout: pdfFormat, margins and the rest, with today's defaults. */
export function paginatedPdfOptions(options: CaptureOptions): PDFOptions {
  const settings = paginatedPdfSettings(options);
  return {
    format: settings.format,
    landscape: settings.landscape,
    margin: settings.margin,
    printBackground: settings.printBackground,
    scale: settings.scale,
    pageRanges: settings.pageRanges,
    preferCSSPageSize: settings.preferCssPageSize,
    displayHeaderFooter: settings.displayHeaderFooter,
    ...(settings.displayHeaderFooter ? { headerTemplate: settings.headerTemplate!, footerTemplate: settings.footerTemplate! } : {}),
  };
}

/** Chromium's refusals of print settings the contract cannot check alone (they depend on the document or the paper). */
function printRefusal(error: unknown, options: CaptureOptions): CaptureError | undefined {
  const message = error instanceof Error ? error.message : '';
  if (/page range/i.test(message) && options.pdfPageRanges !== undefined) {
    return new CaptureError(
      'pdf-no-pages',
      `pdfPageRanges: no page of "${options.pdfPageRanges}" exists in this document; nothing was charged`,
      {
        details: [{ field: 'pdfPageRanges', message: 'no page of these ranges exists in the document', value: options.pdfPageRanges }],
      },
    );
  }
  if (/content area is empty|invalid print parameters/i.test(message)) {
    return new CaptureError(
      'pdf-no-room',
      'pdfMargin: the margins leave no room for content on this paper size (pdfFormat, pdfLandscape); nothing was charged',
    );
  }
  return undefined;
}

/** Prints the page: paginated (pdfFormat, default A4, with margins), or one continuous page sized to the document (pdfPageLayout=single). */
export async function capturePdf(slot: Slot, options: CaptureOptions, timeout: number): Promise<RenderResult> {
  const { page } = slot;
  const viewport = effectiveViewport(options);
  let buffer: Uint8Array | undefined;
  if (options.pdfPageLayout === 'single') {
    await emulateMedia(slot, options, 'screen');
    const size = await documentSize(page);
    const height = options.fullPage ? size.height : viewport.height;
    if (height <= MAX_SINGLE_PDF_HEIGHT_PX) {
      buffer = await page.pdf({
        width: `${viewport.width}px`,
        height: `${height + 1}px`,
        printBackground: options.pdfPrintBackground,
        pageRanges: '1',
        timeout,
      });
    }
    await emulateMedia(slot, options, '');
  }
  try {
    buffer ??= await page.pdf({ ...paginatedPdfOptions(options), timeout });
  } catch (error) {
    throw printRefusal(error, options) ?? error;
  }
  return { buffer: Buffer.from(buffer), mime: MIME_TYPES.pdf, extension: 'pdf' };
}

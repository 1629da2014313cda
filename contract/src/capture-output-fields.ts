import { FORMATS } from './capture-formats.js';
import { LIMITS } from './limits.js';
import { booleanParam, enumParam, numberParam } from './params.js';
import { pdfFields } from './pdf-options.js';
import { videoFields } from './video-options.js';

export const PDF_PAGE_LAYOUTS = ['paginated', 'single'] as const;

/** The parameters of `GET /capture` that choose the file: its format, the pdf and video options, binary or JSON, quality. */
export const captureOutputFields = {
  format: enumParam(
    'format',
    FORMATS,
    'png',
    "Output format: an image (png, webp, jpeg), pdf, or the page's content: html (the DOM after scripts), markdown (the main content: Readability's article, or Defuddle's or the main landmark's when Readability's is mostly links or much shorter than the page's main text), text (the visible text) or mhtml (Chromium's snapshot archive); or a scrolling video: mp4, webm or gif (videoDuration, videoFps, scrollEasing).",
  ),
  pdfPageLayout: enumParam(
    'pdfPageLayout',
    PDF_PAGE_LAYOUTS,
    'paginated',
    'paginated: multi-page A4 with margins (pdfFormat, pdfMargin and the other pdf* options change that); single: one continuous page sized to the document height (viewport height when not full page). Ignored unless format is pdf.',
  ),
  ...pdfFields,
  ...videoFields,
  returnFile: booleanParam('returnFile', true, 'true: binary file; false: JSON with base64 data.'),
  imageQuality: numberParam(
    'imageQuality',
    { min: LIMITS.imageQualityMin, max: LIMITS.imageQualityMax },
    90,
    'Quality 1 to 100; for jpeg and webp.',
  ),
};

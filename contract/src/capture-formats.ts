/** The output formats of a capture and the MIME type each is answered with. */
import { CONTENT_FORMATS, CONTENT_MIME_TYPES } from './page-insight.js';
import { VIDEO_FORMATS, VIDEO_MIME_TYPES } from './video-options.js';

export const IMAGE_FORMATS = ['png', 'webp', 'jpeg'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];
/** Images, pdf, the page's content (html, markdown, text, mhtml) and scrolling video (mp4, webm, gif). */
export const FORMATS = [...IMAGE_FORMATS, 'pdf', ...CONTENT_FORMATS, ...VIDEO_FORMATS] as const;
export type CaptureFormat = (typeof FORMATS)[number];

export const MIME_TYPES: Record<CaptureFormat, string> = {
  png: 'image/png',
  webp: 'image/webp',
  jpeg: 'image/jpeg',
  pdf: 'application/pdf',
  ...CONTENT_MIME_TYPES,
  ...VIDEO_MIME_TYPES,
};

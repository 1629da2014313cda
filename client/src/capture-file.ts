import { MIME_TYPES } from '@daguerre/contract';
import { parseContentDispositionFileName } from './content-disposition.js';
import { headersToRecord } from './daguerre-error.js';

/** A captured file (`returnFile=true`). */
export interface CaptureFile {
  bytes: Uint8Array;
  /** e.g. `image/png`, `application/pdf`. */
  contentType: string;
  /** From `Content-Disposition`; `capture.<ext>` if the service sent none. */
  fileName: string;
  /** Response headers, lower-cased names: `x-ratelimit-*`, `x-service-ai-result`, … */
  headers: Record<string, string>;
  /** HTTP status the target's main document answered (`X-Target-Status`); null for html captures and job files. */
  targetStatus: number | null;
  /** The target's URL after redirects (`X-Final-Url`); null for html captures and job files. */
  finalUrl: string | null;
  /** True when the image was cut to the full-page budget (`X-Capture-Truncated`). */
  truncated: boolean;
  /** True when waitUntil was not reached in time and the page was captured as it was (`X-Capture-Wait-Timed-Out`). */
  waitTimedOut: boolean;
  /** True when fullPageScroll stopped while the page was still growing (`X-Capture-Still-Growing`). */
  stillGrowing: boolean;
  /** True when the page could not be read in time after its file: the file is whole, the page's reports are not (`X-Capture-Inspection-Timed-Out`). */
  inspectionTimedOut: boolean;
}

const EXTENSION_BY_MIME = new Map(Object.entries(MIME_TYPES).map(([format, mime]) => [mime, format]));

/** A binary answer (a capture, or a job's file) with its name and headers. */
export async function fileOf(response: Response): Promise<CaptureFile> {
  const contentType = response.headers.get('content-type') ?? 'application/octet-stream';
  const mime = contentType.split(';')[0]?.trim() ?? contentType;
  const fileName =
    parseContentDispositionFileName(response.headers.get('content-disposition')) ?? `capture.${EXTENSION_BY_MIME.get(mime) ?? 'bin'}`;
  const status = response.headers.get('x-target-status');
  return {
    bytes: new Uint8Array(await response.arrayBuffer()),
    contentType,
    fileName,
    headers: headersToRecord(response.headers),
    targetStatus: status !== null && /^\d{3}$/.test(status) ? Number(status) : null,
    finalUrl: response.headers.get('x-final-url'),
    truncated: response.headers.get('x-capture-truncated') === 'true',
    waitTimedOut: response.headers.get('x-capture-wait-timed-out') === 'true',
    stillGrowing: response.headers.get('x-capture-still-growing') === 'true',
    inspectionTimedOut: response.headers.get('x-capture-inspection-timed-out') === 'true',
  };
}

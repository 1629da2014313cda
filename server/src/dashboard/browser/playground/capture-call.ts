import type { CaptureQuality, CaptureResult, ErrorBody, PageMetadata } from '@daguerre/contract';
import type { HeaderQuality } from './insight-view.js';
import type { Param } from './request-params.js';
import { fileExtension } from './snippets.js';

/**
 * The Playground's call to the API's own /capture, with the key from the page, as a program would
 * make it (docs/using-the-api.md): how the request is made and how each kind of answer is read.
 */

/**
 * Everything but a pdf is asked for as JSON (returnFile=false), so the quality report and the
 * metadata come with the file; large HTML goes as a JSON body, as the typed client sends it (URL
 * length limits).
 */
export function captureRequest(list: Param[], format: string, source: string, key: string): { input: string; init: RequestInit } {
  const asJson = format !== 'pdf';
  const query = new URLSearchParams();
  list.forEach(([name, value]) => {
    query.set(name, String(value));
  });
  if (asJson) query.set('returnFile', 'false');
  const html = source === 'html' ? String((list[0] as Param)[1]) : '';
  const usePost = html.length > 4000;
  const body: Record<string, Param[1]> = {};
  list.forEach(([name, value]) => {
    body[name] = value;
  });
  if (asJson) body.returnFile = false;
  return usePost
    ? {
        input: '/capture',
        init: { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) },
      }
    : { input: '/capture?' + query.toString(), init: { headers: { 'X-API-Key': key } } };
}

/** An error answer as "401 INVALID_API_KEY" and its message (with each rejected field), or its raw text. */
export async function errorSummary(response: Response): Promise<{ code: string; message: string }> {
  const text = await response.text();
  let message = text;
  let code = 'HTTP ' + response.status;
  try {
    const parsed = JSON.parse(text) as ErrorBody;
    code = response.status + ' ' + parsed.error.code;
    message = parsed.error.message;
    const details = parsed.error.details;
    if (Array.isArray(details)) message += ' ' + details.map((d) => d.field + ': ' + d.message).join('; ');
  } catch {
    /* not JSON: show the text */
  }
  return { code, message };
}

/** A successful answer: the file, its name and text, and what to show of its quality. */
export interface CaptureAnswer {
  blob: Blob;
  fileName: string;
  content: string | undefined;
  quality: CaptureQuality | null;
  metadata: PageMetadata | null | undefined;
  headerQuality: HeaderQuality | null;
}

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html;charset=utf-8',
  markdown: 'text/markdown;charset=utf-8',
  text: 'text/plain;charset=utf-8',
  mhtml: 'multipart/related',
};

export async function readCapture(response: Response, format: string): Promise<CaptureAnswer> {
  if (format !== 'pdf') {
    const data = ((await response.json()) as CaptureResult).data;
    return {
      blob: data.imageData ? dataUriBlob(data.imageData) : new Blob([data.content || ''], { type: CONTENT_TYPES[format] || 'text/plain' }),
      fileName: data.fileName,
      content: data.content,
      quality: data.quality,
      metadata: data.metadata,
      headerQuality: null,
    };
  }
  const blob = await response.blob();
  return {
    blob,
    fileName: fileNameOf(response, format),
    content: undefined,
    quality: null,
    metadata: null,
    headerQuality: { value: response.headers.get('x-capture-quality'), findings: response.headers.get('x-capture-quality-findings') },
  };
}

/** The bytes of a data: URI's base64 payload (the JSON form's imageData). */
function dataUriBlob(uri: string): Blob {
  const comma = uri.indexOf(',');
  const binary = atob(uri.slice(comma + 1));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new Blob([bytes], { type: uri.slice(5, uri.indexOf(';')) });
}

function fileNameOf(response: Response, format: string): string {
  const disposition = response.headers.get('content-disposition') || '';
  const match = /filename="([^"]+)"/.exec(disposition);
  return match ? (match[1] as string) : 'capture.' + fileExtension(format);
}

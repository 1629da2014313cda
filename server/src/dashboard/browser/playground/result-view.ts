/**
 * The Playground's result card: a message (an error, or "PDF ready"), the captured image or text,
 * and the Open / Download links to the file held in the tab (an object URL, never uploaded).
 */

/** The file of a successful capture, as the result card shows it. */
export interface CapturedFile {
  format: string;
  fileName: string;
  blob: Blob;
  /** The text of a content format (html, markdown, text, mhtml). */
  content: string | undefined;
  /** The alt text of the image. */
  description: string;
}

const CONTENT_FORMATS = ['html', 'markdown', 'text', 'mhtml'];
/** More text than this is cut in the page (the download has it all). */
const CONTENT_PREVIEW_CHARS = 20000;

export function showMessage(result: HTMLElement, kind: 'error' | 'success', title: string, text: string): void {
  result.classList.remove('is-loading');
  result.innerHTML = '';
  const box = document.createElement('div');
  box.className = 'alert alert-' + kind;
  box.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  const inner = document.createElement('div');
  const strong = document.createElement('strong');
  strong.textContent = title;
  inner.appendChild(strong);
  inner.appendChild(document.createTextNode(' ' + text));
  box.appendChild(inner);
  result.appendChild(box);
}

export function showFile(result: HTMLElement, file: CapturedFile, objectUrl: string): void {
  if (file.format === 'pdf') {
    showMessage(result, 'success', 'PDF ready.', file.fileName + ' (' + formatBytes(file.blob.size) + ')');
  } else if (CONTENT_FORMATS.indexOf(file.format) >= 0) {
    const content = file.content ?? '';
    const pre = document.createElement('pre');
    pre.className = 'pg-content mono';
    pre.textContent = content.length > CONTENT_PREVIEW_CHARS ? content.slice(0, CONTENT_PREVIEW_CHARS) + '\n…' : content;
    result.appendChild(pre);
  } else {
    const img = document.createElement('img');
    img.src = objectUrl;
    img.alt = file.description;
    result.appendChild(img);
  }
  const links = document.createElement('div');
  links.className = 'pg-links';
  links.appendChild(fileLink(objectUrl, 'Open', null));
  links.appendChild(fileLink(objectUrl, 'Download', file.fileName));
  result.appendChild(links);
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return bytes + ' B';
  if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + ' KB';
  return (bytes / 1024 / 1024).toFixed(1) + ' MB';
}

function fileLink(href: string, text: string, download: string | null): HTMLAnchorElement {
  const a = document.createElement('a');
  a.className = 'button button-small';
  a.href = href;
  a.textContent = text;
  if (download) a.download = download;
  else a.target = '_blank';
  a.rel = 'noopener';
  return a;
}

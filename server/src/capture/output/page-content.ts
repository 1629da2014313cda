import { INSIGHT_LIMITS, MIME_TYPES, type CaptureOptions, type ContentFormat } from '@daguerre/contract';
import { CaptureError } from '../capture-error.js';
import type { Slot } from '../pool/context-pool.js';
import type { RenderResult } from './render-result.js';

/**
 * The page's content as a file (docs/page-insight.md): html (the DOM after scripts, serialized),
 * markdown (the main content: html-to-markdown.ts), text (the visible text, as innerText lays it
 * out) and mhtml (Chromium's own snapshot, Page.captureSnapshot). With clipSelector, html, text and
 * markdown are of that element. A page with nothing in it is a clear 422 NO_CONTENT, never an empty
 * file.
 */

const EXTENSIONS: Record<ContentFormat, string> = { html: 'html', markdown: 'md', text: 'txt', mhtml: 'mhtml' };

const noContent = (what: string) =>
  new CaptureError(
    'no-content',
    `The page has no content to return as ${what}: it shows no text${what === 'text' || what === 'markdown' ? '' : ' and no pictures'}; nothing was charged`,
  );

/**
 * Runs in the page: the DOM as HTML, with absolute link and image URLs and without elements the
 * page hides (exported for scripts/bench/content-recall.ts, which feeds the same HTML to each extractor).
 */
export function serializeInPage(args: { selector: string | null; dropHidden: boolean; leaveOut?: readonly string[] }): string | null {
  const source = args.selector ? document.querySelector(args.selector) : document.documentElement;
  if (!source) return null;
  // Elements matching `leaveOut` (a monitor's ignoreSelectors) are left out of the copy; a selector the page cannot parse matches nothing.
  const leftOut = new Set<Element>();
  for (const selector of args.leaveOut ?? []) {
    try {
      source.querySelectorAll(selector).forEach((element) => leftOut.add(element));
    } catch {
      // Refused by the capture's own selector check (hideSelectors) before this runs.
    }
  }
  const copy = source.cloneNode(true) as Element;
  const originals = Array.from(source.querySelectorAll('*'));
  const copies = Array.from(copy.querySelectorAll('*'));
  const drop: Element[] = [];
  // A page that broke getComputedStyle keeps its hidden elements rather than failing the capture.
  const hidden = (element: Element) => {
    try {
      return getComputedStyle(element).display === 'none';
    } catch {
      return false;
    }
  };
  originals.forEach((original, index) => {
    const twin = copies[index];
    if (!twin) return;
    // The browser resolves href and src against the document's base URL.
    if (original instanceof HTMLAnchorElement && original.hasAttribute('href')) twin.setAttribute('href', original.href);
    if (original instanceof HTMLImageElement && original.hasAttribute('src')) twin.setAttribute('src', original.currentSrc || original.src);
    if (leftOut.has(original)) drop.push(twin);
    else if (args.dropHidden && original.closest('body') && hidden(original) && !original.closest('template')) drop.push(twin);
  });
  for (const element of drop) element.remove();
  const doctype = !args.selector && document.doctype ? `<!DOCTYPE ${document.doctype.name}>\n` : '';
  return doctype + copy.outerHTML;
}

/** Runs in the page: whether the document (or element) shows any text, and any picture. */
function contentPresence(selector: string | null): { text: boolean; pictures: boolean; found: boolean } {
  const root = selector ? document.querySelector(selector) : document.body;
  if (!root) return { text: false, pictures: false, found: false };
  const text = ((root as HTMLElement).innerText ?? root.textContent ?? '').trim().length > 0;
  const pictures = Array.from(root.querySelectorAll('img,svg,canvas,video,picture,iframe')).some((element) => {
    const box = element.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  });
  return { text, pictures, found: true };
}

function visibleText(selector: string | null): string {
  const root = (selector ? document.querySelector(selector) : document.body) as HTMLElement | null;
  return root?.innerText ?? '';
}

/** Cuts text to at most `maxBytes` of UTF-8 without splitting a character. */
export function cutUtf8(text: string, maxBytes: number): { buffer: Buffer; truncated: boolean } {
  const buffer = Buffer.from(text, 'utf8');
  if (buffer.length <= maxBytes) return { buffer, truncated: false };
  let end = maxBytes;
  // Back up over continuation bytes (10xxxxxx) to the start of a character.
  while (end > 0 && (buffer[end]! & 0xc0) === 0x80) end -= 1;
  return { buffer: buffer.subarray(0, end), truncated: true };
}

export async function captureContent(slot: Slot, options: CaptureOptions): Promise<RenderResult> {
  const { page } = slot;
  const format = options.format as ContentFormat;
  const selector = options.clipSelector ?? null;
  const presence = await page.evaluate(contentPresence, selector);
  if (!presence.found)
    throw new CaptureError('element-not-found', `clipSelector "${selector}" matches no element on the page; nothing was charged`);
  const needsText = format === 'text' || format === 'markdown';
  if (!presence.text && (needsText || !presence.pictures)) throw noContent(format);

  const file = (buffer: Buffer, truncated = false): RenderResult => ({
    buffer,
    mime: MIME_TYPES[format],
    extension: EXTENSIONS[format],
    truncated,
  });
  if (format === 'mhtml') {
    const { data } = await slot.session.send('Page.captureSnapshot', { format: 'mhtml' });
    const buffer = Buffer.from(data, 'utf8');
    if (buffer.length > INSIGHT_LIMITS.mhtmlMaxBytes) {
      throw new CaptureError(
        'content-too-large',
        `The page's mhtml snapshot is ${buffer.length} bytes, more than the ${INSIGHT_LIMITS.mhtmlMaxBytes} allowed; nothing was charged. Try format html or markdown.`,
      );
    }
    return file(buffer);
  }
  let text: string;
  if (format === 'text') text = await page.evaluate(visibleText, selector);
  else {
    const html = (await page.evaluate(serializeInPage, { selector, dropHidden: format === 'markdown' })) ?? '';
    if (format === 'html') text = html;
    else {
      // Loaded at the first markdown capture: linkedom, Readability, Defuddle and Turndown hold about
      // 20 MiB of a process that may never be asked for one (docs/scaling.md, "Memory of an idle worker").
      const { htmlToMarkdown } = await import('./html-to-markdown.js');
      // An element chosen with clipSelector is converted whole: the caller already chose the content
      // (and alone it would parse as a document without a body).
      text = selector
        ? htmlToMarkdown(`<!DOCTYPE html><html><body>${html}</body></html>`, { extract: false }).markdown
        : htmlToMarkdown(html, { url: page.url() }).markdown;
      if (!text.trim()) throw noContent(format);
    }
  }
  const cut = cutUtf8(text, INSIGHT_LIMITS.contentMaxBytes);
  return file(cut.buffer, cut.truncated);
}

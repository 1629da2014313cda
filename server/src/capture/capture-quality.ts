import { INSIGHT_LIMITS, isContentFormat, type CaptureOptions, type CaptureQuality, type QualityFinding } from '@rendershot/contract';
import type { Page } from 'puppeteer';
import sharp from 'sharp';
import { ApiError } from '../errors.js';

/**
 * The quality report of every capture (issue #33): is the file any good? Five checks, each finding
 * saying what and where:
 * - blank: the image is one colour (every channel's min and max within a small tolerance), or, for
 *   pdf and the content formats, the document shows no text and no pictures;
 * - imagesNotLoaded: <img> elements in the captured area that are visible but have no picture;
 * - overlay: a fixed or sticky element still covering more than INSIGHT_LIMITS.overlayShare of the
 *   viewport *over other content* (sampled on a grid with elementsFromPoint: an app shell that is
 *   itself fixed, or a fixed background under the content, covers nothing);
 * - fontsFailed: web fonts the page asked for that failed to load (document.fonts, status "error");
 * - stillGrowing: the document got taller between the moment before the capture and after it.
 */

/** Channel spread (0–255) still counted as one colour: JPEG and WebP noise on a flat area. */
const ONE_COLOUR_TOLERANCE = 8;
/** Sample grid over the viewport for the overlay check. */
const GRID_COLUMNS = 16;
const GRID_ROWS = 10;
/** Findings of one kind listed by name (the count says how many there were). */
const LISTED = 5;

/** Runs in the page: the height of the content (not at least the viewport, as the root's scrollHeight is). */
function contentHeight(): number {
  return Math.ceil(Math.max(document.documentElement.getBoundingClientRect().height, document.body?.scrollHeight ?? 0));
}

export interface QualityProbe {
  heightBefore: number;
}

/** Taken right before the file: the document height the stillGrowing check compares with. */
export async function probeBeforeCapture(page: Page): Promise<QualityProbe> {
  return { heightBefore: await page.evaluate(contentHeight) };
}

interface PageFindings {
  height: number;
  /** No visible text and no visible picture in the area. */
  empty: boolean;
  brokenImages: Array<{
    src: string;
    selector: string;
    x: number;
    y: number;
    width: number;
    height: number;
    loading: boolean;
    lazy: boolean;
  }>;
  brokenImageCount: number;
  overlays: Array<{ selector: string; position: string; share: number; x: number; y: number; width: number; height: number }>;
  failedFonts: string[];
}

interface PageCheckArgs {
  /** Where the capture looked: the whole document, the element of clipSelector, or the viewport. */
  area: 'document' | 'viewport' | { selector: string };
  listed: number;
  columns: number;
  rows: number;
  overlayShare: number;
}

/** Runs in the page after the capture: everything but the pixels. */
function inspectPage(args: PageCheckArgs): PageFindings {
  const describe = (element: Element): string => {
    let text = element.tagName.toLowerCase();
    if (element.id) text += `#${element.id}`;
    const classes = typeof element.className === 'string' ? element.className.trim().split(/\s+/).filter(Boolean).slice(0, 3) : [];
    for (const name of classes) text += `.${name}`;
    return text;
  };
  const visible = (element: Element) => {
    const style = getComputedStyle(element);
    return style.display !== 'none' && style.visibility === 'visible' && Number(style.opacity) > 0;
  };
  // The area in document coordinates.
  let area = { left: 0, top: 0, right: innerWidth, bottom: innerHeight };
  const scroll = { x: scrollX, y: scrollY };
  if (args.area === 'document') {
    area = {
      left: 0,
      top: 0,
      right: document.documentElement.scrollWidth,
      bottom: Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0),
    };
  } else if (args.area === 'viewport') {
    area = { left: scroll.x, top: scroll.y, right: scroll.x + innerWidth, bottom: scroll.y + innerHeight };
  } else {
    const target = document.querySelector(args.area.selector);
    if (target) {
      const box = target.getBoundingClientRect();
      area = { left: box.left + scroll.x, top: box.top + scroll.y, right: box.right + scroll.x, bottom: box.bottom + scroll.y };
    }
  }
  const inArea = (box: DOMRect) =>
    box.width > 0 &&
    box.height > 0 &&
    box.right + scroll.x > area.left &&
    box.left + scroll.x < area.right &&
    box.bottom + scroll.y > area.top &&
    box.top + scroll.y < area.bottom;

  // Images: visible, in the area, with a source, and no picture (still loading or broken).
  const brokenImages: PageFindings['brokenImages'] = [];
  let brokenImageCount = 0;
  let pictures = 0;
  for (const image of Array.from(document.images)) {
    const box = image.getBoundingClientRect();
    if (!inArea(box) || !visible(image)) continue;
    const loaded = image.complete && (image.naturalWidth > 0 || image.naturalHeight > 0);
    if (loaded) {
      pictures += 1;
      continue;
    }
    if (!image.getAttribute('src') && !image.getAttribute('srcset')) continue;
    brokenImageCount += 1;
    if (brokenImages.length < args.listed) {
      brokenImages.push({
        src: (image.currentSrc || image.src).slice(0, 300),
        selector: describe(image),
        x: Math.round(box.left + scroll.x),
        y: Math.round(box.top + scroll.y),
        width: Math.round(box.width),
        height: Math.round(box.height),
        loading: !image.complete,
        lazy: image.loading === 'lazy',
      });
    }
  }

  // Emptiness: any visible text or picture-like element (canvas, svg, video, iframe, background image) in the area.
  let empty = pictures === 0;
  if (empty) {
    const root = args.area !== 'document' && args.area !== 'viewport' ? document.querySelector(args.area.selector) : document.body;
    const walker = document.createTreeWalker(root ?? document.documentElement, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node && empty; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!node.nodeValue?.trim() || !parent || parent.closest('script,style,noscript,template,head')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      if (Array.from(range.getClientRects()).some(inArea) && visible(parent)) empty = false;
    }
    if (empty) {
      for (const element of Array.from(document.querySelectorAll('canvas,svg,video,iframe,object,embed,input,textarea,select,button'))) {
        if (inArea(element.getBoundingClientRect()) && visible(element)) {
          empty = false;
          break;
        }
      }
    }
  }

  // Overlays: the topmost element at each grid point, when it sits in a fixed or sticky element
  // and something other than that element (and the root) is underneath.
  const positioned = new Map<Element, Element | null>();
  const fixedAncestor = (element: Element | null): Element | null => {
    const chain: Element[] = [];
    let found: Element | null = null;
    for (
      let current = element;
      current && current !== document.body && current !== document.documentElement;
      current = current.parentElement
    ) {
      if (positioned.has(current)) {
        found = positioned.get(current)!;
        break;
      }
      chain.push(current);
      const position = getComputedStyle(current).position;
      if (position === 'fixed' || position === 'sticky') {
        found = current;
        break;
      }
    }
    for (const element of chain) positioned.set(element, found);
    return found;
  };
  // Per fixed or sticky element: grid points where it is on top, and points where it hides something.
  const onTop = new Map<Element, number>();
  const hiding = new Set<Element>();
  for (let column = 0; column < args.columns; column++) {
    for (let row = 0; row < args.rows; row++) {
      const x = ((column + 0.5) * innerWidth) / args.columns;
      const y = ((row + 0.5) * innerHeight) / args.rows;
      const stack = document.elementsFromPoint(x, y);
      const overlay = fixedAncestor(stack[0] ?? null);
      if (!overlay) continue;
      onTop.set(overlay, (onTop.get(overlay) ?? 0) + 1);
      if (stack.some((element) => element !== document.body && element !== document.documentElement && !overlay.contains(element)))
        hiding.add(overlay);
    }
  }
  const overlays: PageFindings['overlays'] = [];
  for (const [element, points] of onTop) {
    const share = points / (args.columns * args.rows);
    // An element that hides nothing anywhere (an app shell that is itself fixed) is the page, not an overlay.
    if (share <= args.overlayShare || !hiding.has(element)) continue;
    const box = element.getBoundingClientRect();
    overlays.push({
      selector: describe(element),
      position: getComputedStyle(element).position,
      share: Math.round(share * 100) / 100,
      x: Math.round(box.left),
      y: Math.round(box.top),
      width: Math.round(box.width),
      height: Math.round(box.height),
    });
  }

  const failedFonts = new Set<string>();
  for (const face of Array.from(document.fonts)) if (face.status === 'error') failedFonts.add(face.family.replace(/^["']|["']$/g, ''));

  return {
    height: Math.ceil(Math.max(document.documentElement.getBoundingClientRect().height, document.body?.scrollHeight ?? 0)),
    empty,
    brokenImages,
    brokenImageCount,
    overlays: overlays.sort((a, b) => b.share - a.share).slice(0, args.listed),
    failedFonts: [...failedFonts].slice(0, args.listed),
  };
}

/** Rows decoded first: a page with anything in its top part is known not blank after this many. */
const FIRST_STRIP_ROWS = 600;

/** Whether every pixel's channels are within the tolerance of `reference`. */
function sameColour(pixels: Uint8Array, reference: Uint8Array, channels: number): boolean {
  for (let channel = 0; channel < channels; channel++) {
    const low = reference[channel]! - ONE_COLOUR_TOLERANCE;
    const high = reference[channel]! + ONE_COLOUR_TOLERANCE;
    for (let index = channel; index < pixels.length; index += channels) {
      const value = pixels[index]!;
      if (value < low || value > high) return false;
    }
  }
  return true;
}

/**
 * Whether an image is a single colour: no pixel differs from the first one by more than the
 * tolerance in any channel. The top strip is decoded first (libvips decodes a PNG top down and
 * stops after the rows asked for), so a page with anything near its top costs a few hundred rows,
 * not the whole full-page image; only a strip that is all one colour leads to the rest. (sharp's
 * stats() took 0.6–1.1 s on a 1280×17 274 page; this takes tens of ms.)
 */
export async function isOneColour(image: Buffer): Promise<boolean | undefined> {
  try {
    const { width, height } = await sharp(image, { limitInputPixels: false }).metadata();
    if (!width || !height) return undefined;
    const rows = async (top: number, count: number) => {
      const { data, info } = await sharp(image, { limitInputPixels: false, sequentialRead: true })
        .extract({ left: 0, top, width, height: count })
        .raw()
        .toBuffer({ resolveWithObject: true });
      return { data, channels: info.channels };
    };
    const first = await rows(0, Math.min(FIRST_STRIP_ROWS, height));
    const reference = first.data.subarray(0, first.channels);
    if (!sameColour(first.data, reference, first.channels)) return false;
    if (height <= FIRST_STRIP_ROWS) return true;
    const rest = await rows(FIRST_STRIP_ROWS, height - FIRST_STRIP_ROWS);
    return sameColour(rest.data, reference, rest.channels);
  } catch {
    return undefined;
  }
}

const IMAGE_MIMES = new Set(['image/png', 'image/jpeg', 'image/webp']);

export interface QualityInput {
  options: CaptureOptions;
  probe: QualityProbe;
  /** The file (an image is checked by its pixels). */
  file: { buffer: Buffer; mime: string };
}

export async function readCaptureQuality(page: Page, { options, probe, file }: QualityInput): Promise<CaptureQuality> {
  const area: PageCheckArgs['area'] = options.clipSelector
    ? { selector: options.clipSelector }
    : options.fullPage || options.format === 'pdf' || isContentFormat(options.format)
      ? 'document'
      : 'viewport';
  const [found, oneColour] = await Promise.all([
    page.evaluate(inspectPage, { area, listed: LISTED, columns: GRID_COLUMNS, rows: GRID_ROWS, overlayShare: INSIGHT_LIMITS.overlayShare }),
    IMAGE_MIMES.has(file.mime) ? isOneColour(file.buffer) : Promise.resolve(undefined),
  ]);
  const findings: QualityFinding[] = [];
  // html, markdown and text hold the page's words and URLs, not its pixels: what pictures, overlays
  // and fonts did to the look does not change them (blank is NO_CONTENT there, page-content.ts).
  const pixelsMatter = options.format === 'mhtml' || !isContentFormat(options.format);
  const where =
    area === 'document' ? 'the page' : area === 'viewport' ? 'the viewport' : `the element of clipSelector "${options.clipSelector}"`;
  // Pixels decide for images; the document decides for pdf and content (and when the image could not be read).
  if (oneColour ?? found.empty) {
    findings.push({
      check: 'blank',
      message: oneColour
        ? 'The image is a single colour: nothing of the page is visible in it'
        : `Nothing is visible in ${where}: no text and no pictures`,
    });
  }
  if (pixelsMatter && found.brokenImageCount > 0) {
    findings.push({
      check: 'imagesNotLoaded',
      message: `${found.brokenImageCount} image${found.brokenImageCount === 1 ? '' : 's'} in ${where} had no picture when it was captured: ${found.brokenImages.map((image) => `${image.selector} (${image.src || 'no src'}) at ${image.x},${image.y}`).join('; ')}${
        found.brokenImages.some((image) => image.lazy) && !options.fullPageScroll
          ? ' (loading=lazy images: fullPageScroll=true scrolls through the page so that they load)'
          : ''
      }`,
      count: found.brokenImageCount,
      images: found.brokenImages,
    });
  }
  for (const overlay of pixelsMatter ? found.overlays : []) {
    findings.push({
      check: 'overlay',
      message: `A ${overlay.position} element ${overlay.selector} covers ${Math.round(overlay.share * 100)} % of the viewport over the page's content (at ${overlay.x},${overlay.y}, ${overlay.width}×${overlay.height})`,
      ...overlay,
    });
  }
  if (pixelsMatter && found.failedFonts.length > 0) {
    findings.push({
      check: 'fontsFailed',
      message: `Web fonts failed to load (a fallback font was drawn instead): ${found.failedFonts.join(', ')}`,
      families: found.failedFonts,
    });
  }
  if (found.height > probe.heightBefore) {
    findings.push({
      check: 'stillGrowing',
      message: `The page was still growing: ${probe.heightBefore} px tall before the capture, ${found.height} px after it`,
      heightBefore: probe.heightBefore,
      heightAfter: found.height,
    });
  }
  return { ok: findings.length === 0, findings };
}

/** failOnBlank: a blank capture is the caller's 422, charged nothing. */
export function assertNotBlank(quality: CaptureQuality, options: Pick<CaptureOptions, 'failOnBlank'>): void {
  const blank = quality.findings.find((finding) => finding.check === 'blank');
  if (!options.failOnBlank || !blank) return;
  throw new ApiError('CAPTURE_BLANK', `The capture is blank (${blank.message}) and failOnBlank is true; nothing was charged`, {
    details: { findings: [blank] },
  });
}

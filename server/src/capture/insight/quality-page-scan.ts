/**
 * The in-page half of the quality report (capture-quality.ts): runs in the page after the capture
 * and reads everything but the pixels: pictures without a picture in the captured area, whether
 * the area shows anything at all, fixed or sticky elements covering content, failed web fonts, and
 * the content height (stillGrowing).
 */

export interface PageFindings {
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
  /** Of those, the ones still loading (not `complete`): the only ones a moment later could show. */
  loadingImageCount: number;
  overlays: Array<{ selector: string; position: string; share: number; x: number; y: number; width: number; height: number }>;
  failedFonts: string[];
}

export interface PageCheckArgs {
  /** Where the capture looked: the whole document, the element of clipSelector, or the viewport. */
  area: 'document' | 'viewport' | { selector: string };
  listed: number;
  columns: number;
  rows: number;
  overlayShare: number;
}

/** Runs in the page after the capture: everything but the pixels. */
export function inspectPage(args: PageCheckArgs): PageFindings {
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
  let loadingImageCount = 0;
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
    if (!image.complete) loadingImageCount += 1;
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
      // The topmost element alone first: the whole stack under the point (about twice the cost on a
      // news page) is only needed where a fixed or sticky element is on top and not yet known to hide something.
      const overlay = fixedAncestor(document.elementFromPoint(x, y));
      if (!overlay) continue;
      onTop.set(overlay, (onTop.get(overlay) ?? 0) + 1);
      if (hiding.has(overlay)) continue;
      const stack = document.elementsFromPoint(x, y);
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
    loadingImageCount,
    overlays: overlays.sort((a, b) => b.share - a.share).slice(0, args.listed),
    failedFonts: [...failedFonts].slice(0, args.listed),
  };
}

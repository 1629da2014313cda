import { INSIGHT_LIMITS, isContentFormat, type CaptureOptions, type CaptureQuality, type QualityFinding } from '@daguerre/contract';
import type { Page } from 'puppeteer-core';
import { isOneColour } from '../output/blank-image.js';
import { inspectPage, type PageCheckArgs, type PageFindings } from './quality-page-scan.js';
import { CaptureError } from '../capture-error.js';
import { isProtocolTimeout } from '../page/stage-guard.js';

/**
 * The quality report of every capture (docs/page-insight.md): is the file any good? Five checks,
 * each finding saying what and where:
 * - blank: the image is one colour (every pixel within a small tolerance of the first: blank-image.ts),
 *   or, for pdf and mhtml, the document shows no text and no pictures (quality-page-scan.ts);
 * - imagesNotLoaded: <img> elements in the captured area that are visible but have no picture;
 * - overlay: a fixed or sticky element still covering more than INSIGHT_LIMITS.overlayShare of the
 *   viewport *over other content* (sampled on a grid with elementsFromPoint: an app shell that is
 *   itself fixed, or a fixed background under the content, covers nothing);
 * - fontsFailed: web fonts the page asked for that failed to load (document.fonts, status "error");
 * - stillGrowing: the document got taller between the moment before the capture and after it (for a
 *   full page, between its last measure for the image and after it: full-page-capture.ts), or the
 *   full-page scroll stopped while it grew; the page report says the same (agreeOnGrowth).
 */

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
  /** null when the page would not say (a page that broke its own DOM APIs): stillGrowing is then not judged. */
  heightBefore: number | null;
}

/** Taken right before the file: the document height the stillGrowing check compares with. */
export async function probeBeforeCapture(page: Page): Promise<QualityProbe> {
  // The report never fails a capture: a page that broke the DOM APIs it needs just gets fewer checks.
  return { heightBefore: await page.evaluate(contentHeight).catch(() => null) };
}
const IMAGE_MIMES = new Set(['image/png', 'image/jpeg', 'image/webp']);

export interface QualityInput {
  options: CaptureOptions;
  /** Still being read when the page is read beside the screenshot. */
  probe: QualityProbe | Promise<QualityProbe>;
  /**
   * The file (an image is checked by its pixels). A promise when the page is read beside the
   * screenshot (capture-readers.ts): the file is still being taken while the page is scanned.
   */
  file: CapturedFile | Promise<CapturedFile>;
}

export type CapturedFile = { buffer: Buffer; mime: string; growth?: { heightBefore: number; heightAfter: number } | undefined };

export async function readCaptureQuality(page: Page, { options, probe, file }: QualityInput): Promise<CaptureQuality> {
  const beside = file instanceof Promise;
  const taken = Promise.resolve(file);
  const area: PageCheckArgs['area'] = options.clipSelector
    ? { selector: options.clipSelector }
    : options.fullPage || options.format === 'pdf' || isContentFormat(options.format)
      ? 'document'
      : 'viewport';
  const scan = () =>
    page
      .evaluate(inspectPage, { area, listed: LISTED, columns: GRID_COLUMNS, rows: GRID_ROWS, overlayShare: INSIGHT_LIMITS.overlayShare })
      .catch((error: unknown): PageFindings => {
        // A page too busy to answer in time is a report not made (capture-readers.ts), not a page without findings.
        if (isProtocolTimeout(error)) throw error;
        return {
          height: 0,
          empty: false,
          brokenImages: [],
          brokenImageCount: 0,
          loadingImageCount: 0,
          overlays: [],
          failedFonts: [],
        };
      });
  const [first, oneColour, heightAfter, growth] = await Promise.all([
    scan(),
    taken.then(({ buffer, mime }) => (IMAGE_MIMES.has(mime) ? isOneColour(buffer) : undefined)),
    // Read beside the screenshot, the scan's height may be from before it: the height once the file is taken.
    beside ? taken.then(() => page.evaluate(contentHeight).catch(() => 0)) : 0,
    taken.then(({ growth }) => growth),
  ]);
  // Read beside the screenshot, an image still arriving may have been painted in time: pictures
  // still loading then are looked at again once the file is taken, as a scan after the capture
  // would. A picture that failed (`complete` without pixels) stays missing: no second scan for it.
  const found = beside && first.loadingImageCount > 0 ? await taken.then(scan) : first;
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
  // A full page measured itself right before and after its image (it was retaken if it grew between):
  // the heights the image was taken at, not those of before its late pictures settled.
  const height = growth ? growth.heightAfter : Math.max(found.height, heightAfter);
  const heightBefore = growth ? growth.heightBefore : (await probe).heightBefore;
  if (heightBefore !== null && height > heightBefore) {
    findings.push({
      check: 'stillGrowing',
      message: `The page was still growing: ${heightBefore} px tall before the capture, ${height} px after it`,
      heightBefore,
      heightAfter: height,
    });
  }
  return { ok: findings.length === 0, findings };
}

/**
 * One answer to "was the page still growing?" in the page report (X-Capture-Still-Growing) and the
 * quality report: the page grew while it was captured (the quality check), or the full-page scroll
 * stopped while it grew (`scrolledWhileGrowing`, full-page-scroll.ts). Either one makes both say so.
 */
export function agreeOnGrowth(
  quality: CaptureQuality,
  scrolledWhileGrowing: boolean,
  height: number,
): { quality: CaptureQuality; stillGrowing: boolean } {
  if (quality.findings.some((finding) => finding.check === 'stillGrowing')) return { quality, stillGrowing: true };
  if (!scrolledWhileGrowing) return { quality, stillGrowing: false };
  const finding: QualityFinding = {
    check: 'stillGrowing',
    message: `The page was still growing when fullPageScroll stopped (at fullPageScrollDuration or the full-page height budget): the capture shows its first ${height} px`,
    heightBefore: height,
    heightAfter: height,
  };
  return { quality: { ok: false, findings: [...quality.findings, finding] }, stillGrowing: true };
}

/** failOnBlank: a blank capture is the caller's 422, charged nothing. */
export function assertNotBlank(quality: CaptureQuality, options: Pick<CaptureOptions, 'failOnBlank'>): void {
  const blank = quality.findings.find((finding) => finding.check === 'blank');
  if (!options.failOnBlank || !blank) return;
  throw new CaptureError('blank', `The capture is blank (${blank.message}) and failOnBlank is true; nothing was charged`, {
    details: { findings: [blank] },
  });
}

import { z } from 'zod';
import { booleanParam, optionalBooleanParam, optionalNumberParam, stringParam } from './params.js';

/** Paper sizes Chromium knows by name (puppeteer's PaperFormat). */
export const PDF_FORMATS = ['A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'Letter', 'Legal', 'Tabloid', 'Ledger'] as const;
export type PdfFormat = (typeof PDF_FORMATS)[number];

const MARGIN_SIDES = ['Top', 'Right', 'Bottom', 'Left'] as const;

/** The paginated layout as it has always been: A4, 12 mm top and bottom, 10 mm left and right, backgrounds printed. */
export const PDF_DEFAULTS = {
  format: 'A4' as PdfFormat,
  landscape: false,
  margin: { top: '12mm', right: '10mm', bottom: '12mm', left: '10mm' },
  printBackground: true,
  scale: 1,
  pageRanges: '',
  preferCssPageSize: false,
};

const CSS_LENGTH = /^(0|\d{1,4}(\.\d{1,4})?(px|in|cm|mm))$/;

function cssLength(field: string, documented: string) {
  const message = `${field} must be a CSS length in px, in, cm or mm, e.g. 12mm, 0.5in or 40px (0 without a unit)`;
  // No OpenAPI example: Swagger UI's "Try it out" would send it as a real margin.
  return z
    .string({ errorMap: () => ({ message }) })
    .transform((value) => value.trim().toLowerCase())
    .refine((value) => CSS_LENGTH.test(value), message)
    .optional()
    .describe(
      `${field === 'pdfMargin' ? 'Margin of all four sides' : `${field.slice('pdfMargin'.length)} margin`} of paginated pdf pages, a CSS length (px, in, cm, mm), e.g. 12mm or 0.5in. Default: ${documented}.`,
    );
}

/** Whether a page-range list is one Chromium accepts: "1-3,5", "4-" (to the end), "-2" (from the start); numbers from 1, start ≤ end. */
export function isPageRangeList(value: string): boolean {
  const parts = value.split(',').map((part) => part.trim());
  return parts.every((part) => {
    const match = /^(\d{1,5})?\s*(-)?\s*(\d{1,5})?$/.exec(part);
    if (!match || (match[1] === undefined && match[3] === undefined)) return false;
    const [start, dash, end] = [
      match[1] === undefined ? undefined : Number(match[1]),
      match[2],
      match[3] === undefined ? undefined : Number(match[3]),
    ];
    if (!dash && end !== undefined) return false;
    if (start === 0 || end === 0) return false;
    return start === undefined || end === undefined || start <= end;
  });
}

const templateDescription = (where: 'header' | 'footer') =>
  `HTML of the ${where} of every paginated pdf page (turns the header and footer on). Elements with the classes pageNumber, totalPages, date, title or url get those values. The template is rendered without network access: inline fonts and images (data: URIs, inline <style>); give it a font-size (Chromium's default is tiny). It shows inside the ${where === 'header' ? 'top' : 'bottom'} margin.`;

/** The pdf options (docs/page-control-and-pdf.md); all but pdfPrintBackground apply to the paginated layout only. */
export const pdfFields = {
  // Default in the description only (see optionalBooleanParam): an explicit A4 is refused with pdfPageLayout=single.
  pdfFormat: z
    .enum(PDF_FORMATS, { errorMap: () => ({ message: `pdfFormat must be one of: ${PDF_FORMATS.join(', ')}` }) })
    .optional()
    .describe('Paper size of paginated pdf pages. Default: A4.'),
  pdfLandscape: optionalBooleanParam('pdfLandscape', false, 'true: paginated pdf pages in landscape orientation.'),
  pdfMargin: cssLength('pdfMargin', '12mm top and bottom, 10mm left and right'),
  pdfMarginTop: cssLength('pdfMarginTop', 'pdfMargin, else 12mm'),
  pdfMarginRight: cssLength('pdfMarginRight', 'pdfMargin, else 10mm'),
  pdfMarginBottom: cssLength('pdfMarginBottom', 'pdfMargin, else 12mm'),
  pdfMarginLeft: cssLength('pdfMarginLeft', 'pdfMargin, else 10mm'),
  pdfPrintBackground: booleanParam('pdfPrintBackground', true, 'Print background colours and images (both pdf layouts).'),
  pdfScale: optionalNumberParam('pdfScale', { min: 0.1, max: 2 }, 'Scale of the rendering of paginated pdf pages, 0.1 to 2.', 1),
  pdfPageRanges: z
    .string({ errorMap: () => ({ message: 'pdfPageRanges must be a string' }) })
    .max(200, 'pdfPageRanges must be at most 200 characters')
    .refine(isPageRangeList, 'pdfPageRanges must list pages or ranges from 1, separated by commas, e.g. 1-3,5 or 2- (start ≤ end)')
    .optional()
    .describe(
      'Pages of the paginated pdf to keep, e.g. 1-3,5; 4- runs to the end. Ranges past the last page are ignored; none left is a 400. Default: all pages.',
    ),
  pdfHeaderTemplate: stringParam('pdfHeaderTemplate', 100_000, templateDescription('header')),
  pdfFooterTemplate: stringParam('pdfFooterTemplate', 100_000, templateDescription('footer')),
  pdfPreferCssPageSize: optionalBooleanParam(
    'pdfPreferCssPageSize',
    false,
    'true: a CSS @page size in the document wins over pdfFormat and pdfLandscape.',
  ),
};

type PdfFieldValues = { [K in keyof typeof pdfFields]: z.output<(typeof pdfFields)[K]> };

/** The pdf options that cannot apply to one continuous page (pdfPageLayout=single). */
export const PAGINATED_ONLY_PDF_FIELDS = [
  'pdfFormat',
  'pdfLandscape',
  'pdfMargin',
  'pdfMarginTop',
  'pdfMarginRight',
  'pdfMarginBottom',
  'pdfMarginLeft',
  'pdfScale',
  'pdfPageRanges',
  'pdfHeaderTemplate',
  'pdfFooterTemplate',
  'pdfPreferCssPageSize',
] as const satisfies readonly (keyof PdfFieldValues)[];

/** The paginated layout's settings, defaults applied: what capture-pdf.ts prints with and what the cache key holds. */
export function paginatedPdfSettings(options: Partial<PdfFieldValues>) {
  const margin = Object.fromEntries(
    MARGIN_SIDES.map((side) => {
      const key = side.toLowerCase() as Lowercase<typeof side>;
      return [key, options[`pdfMargin${side}`] ?? options.pdfMargin ?? PDF_DEFAULTS.margin[key]];
    }),
  ) as typeof PDF_DEFAULTS.margin;
  const templated = options.pdfHeaderTemplate !== undefined || options.pdfFooterTemplate !== undefined;
  return {
    format: options.pdfFormat ?? PDF_DEFAULTS.format,
    landscape: options.pdfLandscape ?? PDF_DEFAULTS.landscape,
    margin,
    printBackground: options.pdfPrintBackground ?? PDF_DEFAULTS.printBackground,
    scale: options.pdfScale ?? PDF_DEFAULTS.scale,
    pageRanges: options.pdfPageRanges?.replace(/\s+/g, '') ?? PDF_DEFAULTS.pageRanges,
    preferCssPageSize: options.pdfPreferCssPageSize ?? PDF_DEFAULTS.preferCssPageSize,
    // One template alone would bring Chromium's default (date, title, url) for the other: an empty one instead.
    displayHeaderFooter: templated,
    headerTemplate: templated ? (options.pdfHeaderTemplate ?? '<span></span>') : undefined,
    footerTemplate: templated ? (options.pdfFooterTemplate ?? '<span></span>') : undefined,
  };
}
export type PaginatedPdfSettings = ReturnType<typeof paginatedPdfSettings>;

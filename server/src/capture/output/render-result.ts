/** The file a capture produced: the type the renderer and its format modules (image, pdf, png encoder) share. */
export interface RenderResult {
  buffer: Buffer;
  mime: string;
  extension: string;
  /** A PNG of the same page for analysis when the output itself is a pdf. */
  analysisPng?: Buffer;
  /** True when the image was cut to the full-page budget (full-page-plan.ts). */
  truncated?: boolean;
  /**
   * A full page's height in CSS px when it was measured for the image and right after the image was
   * taken (full-page-capture.ts): a taller page after it was still growing (stillGrowing).
   */
  growth?: { heightBefore: number; heightAfter: number };
}

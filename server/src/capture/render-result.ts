/** The file a capture produced: the type the renderer and its format modules (image, pdf, png encoder) share. */
export interface RenderResult {
  buffer: Buffer;
  mime: string;
  extension: string;
  /** A PNG of the same page for analysis when the output itself is a pdf. */
  analysisPng?: Buffer;
  /** True when the image was cut to the full-page budget (full-page-plan.ts). */
  truncated?: boolean;
}

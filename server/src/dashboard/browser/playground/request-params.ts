import { isChecked, valueOf } from '../dom.js';
import { currentSource, type CaptureSource } from './form-state.js';

/**
 * The capture request the Playground's form describes, as the list of parameters that differ from
 * the API's defaults (docs/reference/api.md), in the order a person would write them. The capture, the
 * snippets and the signed link are all made from this one list.
 */

export type Param = [name: string, value: string | number | boolean];

/** The source first (url or html), then the options. */
export function requestParams(form: HTMLFormElement): Param[] {
  const list: Param[] = [];
  if (currentSource(form) === 'url') list.push(['url', valueOf('#pg-url').trim()]);
  else list.push(['html', valueOf('#pg-html')]);
  return list.concat(captureOptions());
}

/** For the snippets: an empty source shows an example instead of `url=`. */
export function snippetParams(form: HTMLFormElement): Param[] {
  const list = requestParams(form);
  const [name, value] = list[0] as [CaptureSource, Param[1]];
  if (!value) list[0] = [name, name === 'url' ? 'https://example.com' : '<h1>Hello</h1>'];
  return list;
}

function captureOptions(): Param[] {
  const list: Param[] = [];
  const format = valueOf('#format');
  if (format !== 'png') list.push(['format', format]);
  if ((format === 'jpeg' || format === 'webp') && valueOf('#imageQuality')) list.push(['imageQuality', Number(valueOf('#imageQuality'))]);
  if (valueOf('#device') !== 'desktop') list.push(['device', valueOf('#device')]);
  ['viewportWidth', 'viewportHeight', 'delay'].forEach((name) => {
    const value = valueOf('#' + name);
    if (value !== '' && !(name === 'delay' && Number(value) === 0)) list.push([name, Number(value)]);
  });
  if (isChecked('#fullPage') && format !== 'pdf') list.push(['fullPage', true]);
  if (valueOf('#theme') !== 'auto') list.push(['theme', valueOf('#theme')]);
  if (valueOf('#waitUntil') !== 'load') list.push(['waitUntil', valueOf('#waitUntil')]);
  if (valueOf('#waitForSelector').trim()) list.push(['waitForSelector', valueOf('#waitForSelector').trim()]);
  pushTrimmed(list, ['hideSelectors', 'styles', 'timezone', 'locale', 'mediaType']);
  pushTrimmed(list, ['scripts', 'click', 'scrollIntoView']);
  if (format === 'pdf') pushPdfOptions(list);
  for (const name of ['reducedMotion', 'failOnHttpError', 'removeCookieBanners', 'removeAds', 'metadata', 'failOnBlank']) {
    if (isChecked('#' + name)) list.push([name, true]);
  }
  return list;
}

/** The text fields whose id is the parameter's name, when they are not blank. */
function pushTrimmed(list: Param[], names: string[]): void {
  names.forEach((name) => {
    const value = valueOf('#' + name).trim();
    if (value) list.push([name, value]);
  });
}

/** The pdf options that differ from their defaults (the server refuses the paginated ones with the single layout). */
function pushPdfOptions(list: Param[]): void {
  const single = valueOf('#pdfPageLayout') === 'single';
  if (single) list.push(['pdfPageLayout', 'single']);
  if (!isChecked('#pdfPrintBackground')) list.push(['pdfPrintBackground', false]);
  if (single) return;
  if (valueOf('#pdfFormat') !== 'A4') list.push(['pdfFormat', valueOf('#pdfFormat')]);
  if (isChecked('#pdfLandscape')) list.push(['pdfLandscape', true]);
  if (valueOf('#pdfScale') !== '' && Number(valueOf('#pdfScale')) !== 1) list.push(['pdfScale', Number(valueOf('#pdfScale'))]);
  pushTrimmed(list, ['pdfMargin', 'pdfPageRanges', 'pdfHeaderTemplate', 'pdfFooterTemplate']);
  if (isChecked('#pdfPreferCssPageSize')) list.push(['pdfPreferCssPageSize', true]);
}

import { $all, required, valueOf } from '../dom.js';

/**
 * What the Playground's form shows: the fields of the chosen source (a web page or HTML) and of the
 * chosen format only, so that a person sees the options that apply.
 */

export type CaptureSource = 'url' | 'html';

export function currentSource(form: HTMLFormElement): CaptureSource {
  return required<HTMLInputElement>('input[name="source"]:checked', form).value as CaptureSource;
}

export function syncVisibility(form: HTMLFormElement): void {
  const source = currentSource(form);
  $all('[data-source]', form).forEach((el) => {
    el.hidden = el.getAttribute('data-source') !== source;
  });
  const format = valueOf('#format');
  $all('[data-format]', form).forEach((el) => {
    el.hidden = (el.getAttribute('data-format') ?? '').split(' ').indexOf(format) < 0;
  });
  // The service always captures PDFs full page.
  required<HTMLInputElement>('#fullPage').disabled = format === 'pdf';
}

import { describe, expect, it } from 'vitest';
import { isPageRangeList, paginatedPdfSettings } from '@daguerre/contract';

describe('pdf options', () => {
  it('resolves to the layout pdfs always had when none is given', () => {
    expect(paginatedPdfSettings({})).toEqual({
      format: 'A4',
      landscape: false,
      margin: { top: '12mm', right: '10mm', bottom: '12mm', left: '10mm' },
      printBackground: true,
      scale: 1,
      pageRanges: '',
      preferCssPageSize: false,
      displayHeaderFooter: false,
      headerTemplate: undefined,
      footerTemplate: undefined,
    });
  });

  it('lets a side margin win over pdfMargin, and fills the missing template with an empty one', () => {
    const settings = paginatedPdfSettings({ pdfMargin: '1in', pdfMarginBottom: '0', pdfFooterTemplate: '<b>f</b>' });
    expect(settings.margin).toEqual({ top: '1in', right: '1in', bottom: '0', left: '1in' });
    expect(settings).toMatchObject({ displayHeaderFooter: true, headerTemplate: '<span></span>', footerTemplate: '<b>f</b>' });
  });

  it.each([
    ['1', true],
    ['1-3,5', true],
    [' 2 - 4 , 7 ', true],
    ['4-', true],
    ['-2', true],
    ['0', false],
    ['3-1', false],
    ['1,,2', false],
    ['a', false],
    ['-', false],
    ['1-2-3', false],
    ['', false],
  ])('reads %j as a page-range list: %s', (value, valid) => {
    expect(isPageRangeList(value)).toBe(valid);
  });
});

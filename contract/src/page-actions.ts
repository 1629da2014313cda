import { LIMITS } from './limits.js';
import { stringParam } from './params.js';

/**
 * What the caller asks the page to do between load and capture (docs/page-control-and-pdf.md): run
 * a script, click an element, scroll to an element. Each is checked on the page itself (a selector
 * as CSS before navigation, a missing element or a failing script as 400 INVALID_INPUT naming the
 * field).
 */
export const pageActionFields = {
  scripts: stringParam(
    'scripts',
    LIMITS.scriptMaxLength,
    'JavaScript run in the page after load, before capture, as the body of an async function: `await` works and a returned promise is awaited (within the capture deadline). A thrown error or rejection answers 400 INVALID_INPUT with its message.',
  ),
  click: stringParam(
    'click',
    LIMITS.selectorMaxLength,
    'CSS selector of an element clicked (a real mouse click) after load and after scripts, before capture, e.g. a "load more" button. No match: 400 INVALID_INPUT naming it.',
  ),
  scrollIntoView: stringParam(
    'scrollIntoView',
    LIMITS.selectorMaxLength,
    'CSS selector of an element scrolled to the top of the viewport before a viewport capture (not with fullPage or pdf). No match: 400 INVALID_INPUT naming it.',
  ),
};

import { LIMITS } from './limits.js';
import { booleanParam, enumParam, numberParam, stringParam } from './params.js';

export const WAIT_UNTIL = ['load', 'domcontentloaded', 'networkidle0', 'networkidle2'] as const;

/** The parameters of `GET /capture` that say when the page is ready to be taken (docs/capture-fidelity.md, "Best attempt when the wait runs out"). */
export const captureWaitFields = {
  delay: numberParam('delay', { min: 0, max: LIMITS.delayMaxMs, unit: 'ms' }, 0, 'Milliseconds to wait before capture.'),
  waitUntil: enumParam('waitUntil', WAIT_UNTIL, 'load', 'Navigation event to wait for.'),
  waitForSelector: stringParam('waitForSelector', LIMITS.selectorMaxLength, 'CSS selector to wait for before capture.'),
  failOnWaitTimeout: booleanParam(
    'failOnWaitTimeout',
    false,
    'false (best attempt): when waitUntil is not reached within its budget but the page has rendered, the page is captured as it is, marked X-Capture-Wait-Timed-Out: true and data.page.waitTimedOut, and charged. true: such a capture fails with 504 CAPTURE_TIMEOUT instead, and nothing is charged.',
  ),
};

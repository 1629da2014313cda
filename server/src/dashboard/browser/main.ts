import { startCopyButtons } from './copy-buttons.js';
import { startForms } from './forms.js';
import { startUseKeyButtons } from './keys-page.js';
import { startLocalTimes } from './local-times.js';
import { startPlayground } from './playground/playground.js';

/**
 * The dashboard's script (docs/dashboard.md), bundled into server/public/dashboard/dashboard.js
 * by server/scripts/build-dashboard.mjs. Progressive enhancement only: every page works without
 * it except the Playground, which calls the API from the browser. Each part starts only where its
 * page has the elements it enhances.
 */
document.documentElement.classList.add('js');

function start(): void {
  startLocalTimes();
  startCopyButtons();
  startUseKeyButtons();
  startForms();
  startPlayground();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();

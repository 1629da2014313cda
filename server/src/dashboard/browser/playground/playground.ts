import { $, required, valueOf } from '../dom.js';
import { startApiKeyField } from './api-key-field.js';
import { captureHandler } from './capture.js';
import { startCodeTabs } from './code-tabs.js';
import { syncVisibility } from './form-state.js';
import { snippetParams } from './request-params.js';
import { startSignedLink } from './signed-link.js';
import { curlSnippet, tsSnippet } from './snippets.js';

/**
 * The Playground page (views/playground-page.ts), the one page that needs the script: it calls the
 * API from the browser with a key the person pastes, and shows the same request as curl,
 * TypeScript and a signed link, kept in step with the form as it changes.
 */
export function startPlayground(): void {
  const form = $<HTMLFormElement>('#playground-form');
  if (!form) return;
  const keyInput = required<HTMLInputElement>('#pg-key');
  const view = {
    form,
    keyInput,
    result: required('#pg-result'),
    statusLine: required('#pg-status'),
    submit: required<HTMLButtonElement>('#pg-submit'),
  };
  startApiKeyField(keyInput);
  const scheduleSignedLink = startSignedLink(form);
  const renderSnippets = () => {
    const list = snippetParams(form);
    required('#pg-curl').textContent = curlSnippet(list, valueOf('#format') || 'png', window.location.origin);
    required('#pg-ts').textContent = tsSnippet(list, window.location.origin);
    scheduleSignedLink();
  };
  const refresh = () => {
    syncVisibility(form);
    renderSnippets();
  };
  form.addEventListener('input', refresh);
  form.addEventListener('change', refresh);
  const capture = captureHandler(view);
  // The capture shows its own failures in the result card: nothing waits for it.
  form.addEventListener('submit', (event) => void capture(event));
  refresh();
  startCodeTabs();
}

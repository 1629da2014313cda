import { required, valueOf } from '../dom.js';
import { captureRequest, errorSummary, readCapture } from './capture-call.js';
import { currentSource } from './form-state.js';
import { showInsight } from './insight-view.js';
import { requestParams, type Param } from './request-params.js';
import { formatBytes, showFile, showMessage } from './result-view.js';

/** The Playground's elements the capture writes to. */
export interface CaptureView {
  form: HTMLFormElement;
  keyInput: HTMLInputElement;
  result: HTMLElement;
  statusLine: HTMLElement;
  submit: HTMLButtonElement;
}

/**
 * The Playground's Capture button: checks there is a key and something to capture, calls the API
 * from the browser and shows the answer. The file stays in the tab as an object URL, released at
 * the next capture.
 */
export function captureHandler(view: CaptureView): (event: Event) => Promise<void> {
  let objectUrl: string | null = null;
  return async (event) => {
    event.preventDefault();
    const key = view.keyInput.value.trim();
    const list = requestParams(view.form);
    if (!readyToCapture(view, key, list)) return;
    const format = valueOf('#format');
    const { input, init } = captureRequest(list, format, currentSource(view.form), key);
    setBusy(view, true);
    if (objectUrl) URL.revokeObjectURL(objectUrl);
    objectUrl = null;
    const started = performance.now();
    try {
      const response = await fetch(input, init);
      const elapsed = ((performance.now() - started) / 1000).toFixed(2) + ' s';
      if (!response.ok) return await showError(view, response, elapsed);
      const answer = await readCapture(response, format);
      showInsight(answer.quality, answer.metadata, answer.headerQuality);
      objectUrl = URL.createObjectURL(answer.blob);
      view.result.classList.remove('is-loading');
      view.statusLine.textContent = successLine(response, elapsed, answer.blob.size);
      const description = 'Capture of ' + (currentSource(view.form) === 'url' ? String((list[0] as Param)[1]) : 'the HTML');
      showFile(view.result, { format, fileName: answer.fileName, blob: answer.blob, content: answer.content, description }, objectUrl);
    } catch (error) {
      view.statusLine.textContent = '';
      const message = (error as Error | null)?.message;
      showMessage(view.result, 'error', 'Request failed.', String(message ? message : error));
    } finally {
      setBusy(view, false);
    }
  };
}

/** No call without a key or a source: says what is missing and puts the cursor there. */
function readyToCapture(view: CaptureView, key: string, list: Param[]): boolean {
  if (!key) {
    showMessage(view.result, 'error', 'No API key.', 'Paste one of your keys in the field above (create one on the API keys page).');
    view.keyInput.focus();
    return false;
  }
  if (!(list[0] as Param)[1]) {
    const url = currentSource(view.form) === 'url';
    showMessage(view.result, 'error', 'Nothing to capture.', url ? 'Enter the URL of a web page.' : 'Enter some HTML.');
    required(url ? '#pg-url' : '#pg-html').focus();
    return false;
  }
  return true;
}

/** While a capture runs the button cannot be pressed again, and the result card shows it is loading. */
function setBusy(view: CaptureView, busy: boolean): void {
  const { submit } = view;
  submit.disabled = busy;
  if (busy) {
    submit.setAttribute('aria-busy', 'true');
    submit.textContent = 'Capturing…';
    view.statusLine.textContent = '';
    view.result.innerHTML = '';
    view.result.classList.add('is-loading');
  } else {
    submit.removeAttribute('aria-busy');
    submit.textContent = 'Capture';
  }
}

async function showError(view: CaptureView, response: Response, elapsed: string): Promise<void> {
  const { code, message } = await errorSummary(response);
  view.statusLine.textContent = code + ' · ' + elapsed;
  showMessage(view.result, 'error', code + '.', message);
}

/** "200 OK · 1.20 s · 84.1 KB · 39 requests left in this window" (the rate limit's headers). */
function successLine(response: Response, elapsed: string, size: number): string {
  const remaining = response.headers.get('x-ratelimit-remaining');
  return (
    response.status +
    ' OK · ' +
    elapsed +
    ' · ' +
    formatBytes(size) +
    (remaining !== null ? ' · ' + remaining + ' requests left in this window' : '')
  );
}

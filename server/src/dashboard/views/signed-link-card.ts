import { html, type SafeHtml } from '../html.js';
import type { DashboardContext } from '../session.js';
import type { ApiKeyRow } from '../../store/api-key-repository.js';
import { csrfField, icons } from './layout.js';

const LIFETIMES: Array<[number, string]> = [
  [3_600, '1 hour'],
  [86_400, '1 day'],
  [604_800, '7 days'],
  [2_592_000, '30 days'],
  [0, 'never'],
];

/** The playground's signed link for the chosen options: signed by the server, usable as a public <img src>. */
export function signedLinkCard(ctx: DashboardContext, keys: ApiKeyRow[]): SafeHtml {
  return html`<section class="card stack" aria-labelledby="pg-signed-title" id="pg-signed">
    <div class="card-header"><h2 id="pg-signed-title">Signed link</h2></div>
    <p class="hint">A link for these options that carries no key: put it in an <code>&lt;img src&gt;</code>, an e-mail or an Open Graph tag.
      It is signed with the chosen key's signing secret; every view is a capture (use cache to make repeats free).</p>
    <div class="field-row">
      <div class="field"><label for="pg-signed-key">Signed by key</label>
        <select id="pg-signed-key">${keys.map((key) => html`<option value="${key.id}">${key.name} (${key.prefix}…)</option>`)}</select></div>
      <div class="field"><label for="pg-signed-expires">Expires after</label>
        <select id="pg-signed-expires">${LIFETIMES.map(([seconds, label]) => html`<option value="${String(seconds)}" ${seconds === 86_400 ? 'selected' : ''}>${label}</option>`)}</select></div>
    </div>
    <form id="pg-signed-csrf" hidden>${csrfField(ctx)}</form>
    <div class="code-block">
      <button type="button" class="button button-small copy-code" data-copy="#pg-signed-url">${icons.copy}<span>Copy</span></button>
      <pre><code id="pg-signed-url" aria-live="polite">${keys.length === 0 ? 'Create a key to make signed links.' : 'Enter a URL or HTML to make a signed link.'}</code></pre>
    </div>
  </section>`;
}

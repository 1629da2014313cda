import { html, type SafeHtml } from '../html.js';
import { DASHBOARD_PATH, type DashboardContext } from '../session.js';
import { csrfField, icons } from './layout.js';

/** The key id and its signing secret with a copy button: what signed links need, shown once. */
export function signingSecretField(keyId: string, secret: string): SafeHtml {
  return html`<div class="stack" data-testid="signing-secret">
    <p>Its <strong>signing secret</strong> signs capture links (<code>keyId=${keyId}</code>); it is also shown only this once and stored only encrypted.</p>
    <div class="copy-field">
      <label class="visually-hidden" for="new-signing-secret">Signing secret</label>
      <input id="new-signing-secret" class="mono" type="text" readonly value="${secret}" spellcheck="false" autocomplete="off" data-key-id="${keyId}">
      <button type="button" class="button" data-copy="#new-signing-secret">${icons.copy}<span>Copy secret</span></button>
    </div>
  </div>`;
}

export function newSecretPanel(ctx: DashboardContext): SafeHtml {
  const rotated = ctx.flash?.newSecret;
  if (!rotated) return html``;
  return html`<section class="card new-key" aria-labelledby="new-secret-title" data-testid="new-secret">
    <h2 id="new-secret-title">${icons.check} New signing secret for “${rotated.name}”</h2>
    <p><strong>Copy it now.</strong> Links signed with the previous secret no longer work.</p>
    ${signingSecretField(rotated.id, rotated.signingSecret)}
  </section>`;
}

/** The organization setting: refuse keys in the query string, where they end up in public URLs. */
export function signedLinksCard(ctx: DashboardContext, required: boolean): SafeHtml {
  return html`<section class="card" aria-labelledby="signed-links-title" id="signed-links">
    <h2 id="signed-links-title">Signed links</h2>
    <p>A signed link (<code>keyId</code>, <code>expires</code>, <code>signature</code>) can stand in a public <code>&lt;img src&gt;</code>
      without giving the key away. The Playground makes them for the options you choose.</p>
    <form method="post" action="${DASHBOARD_PATH}/keys/require-signed-links" class="stack">
      ${csrfField(ctx)}
      <div class="field field-check">
        <input id="require-signed-links" name="requireSignedLinks" type="checkbox" value="on" ${required ? 'checked' : ''}>
        <label for="require-signed-links">Require signed links <span class="hint-inline">(refuse <code>apiKey</code> in the query string with 401 SIGNATURE_REQUIRED; the <code>X-API-Key</code> header keeps working)</span></label>
      </div>
      <div class="form-actions"><button type="submit" class="button">Save</button></div>
    </form>
  </section>`;
}

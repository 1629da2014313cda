import { html, type SafeHtml } from '../html.js';
import { DASHBOARD_PATH, type DashboardContext } from '../session.js';
import type { ApiKeyRow } from '../../store/api-key-repository.js';
import { time } from './format.js';
import { alert, badge, csrfField, emptyState, flashBanner, icons, page, pageHeading, postButton, type Assets } from './layout.js';
import { newSecretPanel, signedLinksCard, signingSecretField } from './signing-secret-views.js';

export type KeyStatus = 'active' | 'expired' | 'revoked';

export function keyStatus(key: ApiKeyRow, now: number): KeyStatus {
  if (key.revoked_at !== null) return 'revoked';
  if (key.expires_at !== null && Number(key.expires_at) <= now) return 'expired';
  return 'active';
}

const STATUS_BADGE = { active: 'ok', expired: 'warn', revoked: 'bad' } as const;

export interface KeyForm {
  name: string;
  expires: string;
}

export interface KeysView {
  ctx: DashboardContext;
  assets: Assets;
  keys: ApiKeyRow[];
  now: number;
  /** The organization refuses `apiKey` in the query string (signed links only). */
  requireSignedLinks: boolean;
  form?: KeyForm;
  errors?: Partial<Record<keyof KeyForm, string>>;
}

/** yyyy-mm-dd of tomorrow (UTC): the earliest expiry the form accepts. */
export function tomorrow(now: number): string {
  return new Date(now + 86_400_000).toISOString().slice(0, 10);
}

function newKeyPanel(ctx: DashboardContext): SafeHtml {
  const created = ctx.flash?.newKey;
  if (!created) return html``;
  return html`<section class="card new-key" aria-labelledby="new-key-title" data-testid="new-key">
    <h2 id="new-key-title">${icons.check} API key “${created.name}” created</h2>
    <p><strong>Copy it now.</strong> For your security the full key is shown only this once; we store just a hash of it.
      If you lose it, revoke it and create another.</p>
    <div class="copy-field">
      <label class="visually-hidden" for="new-key-value">New API key</label>
      <input id="new-key-value" class="mono" type="text" readonly value="${created.value}" spellcheck="false" autocomplete="off">
      <button type="button" class="button button-primary" data-copy="#new-key-value">${icons.copy}<span>Copy</span></button>
    </div>
    ${created.signingSecret && created.id ? signingSecretField(created.id, created.signingSecret) : ''}
    <p class="hint">Send it as header <code>X-API-Key</code> (or query parameter <code>apiKey</code>).
      <button type="button" class="link-button" data-use-key="#new-key-value">Try it in the Playground →</button></p>
  </section>`;
}

function keyRows(ctx: DashboardContext, keys: ApiKeyRow[], now: number): SafeHtml {
  return html`${keys.map((key) => {
    const status = keyStatus(key, now);
    return html`<tr data-key-id="${key.id}" class="status-${status}">
      <th scope="row" class="key-name" title="${key.name}">${key.name}</th>
      <td><code class="prefix">${key.prefix}…</code></td>
      <td>${time(key.created_at, 'date')}</td>
      <td>${time(key.expires_at, 'date', 'Never')}</td>
      <td>${time(key.last_used_at, 'datetime', 'Never')}</td>
      <td>${badge(STATUS_BADGE[status], status === 'active' ? 'Active' : status === 'expired' ? 'Expired' : 'Revoked')}</td>
      <td class="actions">${
        status === 'revoked'
          ? html`<span class="muted">Revoked ${time(key.revoked_at, 'date')}</span>`
          : html`<div class="button-row">${postButton(ctx, `${DASHBOARD_PATH}/keys/${key.id}/rotate-secret`, 'New signing secret', 'button button-small')}
              <a class="button button-small button-danger-ghost" href="${DASHBOARD_PATH}/keys/${key.id}/revoke" aria-label="Revoke ${key.name}">Revoke</a></div>`
      }</td>
    </tr>`;
  })}`;
}

export function keysPage(view: KeysView): SafeHtml {
  const { ctx, now } = view;
  const form = view.form ?? { name: '', expires: '' };
  const errors = view.errors ?? {};
  const sorted = [...view.keys].sort((a, b) => Number(b.created_at) - Number(a.created_at));
  const active = sorted.filter((k) => keyStatus(k, now) === 'active').length;
  const body = html`${pageHeading(
    'API keys',
    html`Keys authenticate calls to <code>/capture</code> and <code>/usage</code>. Every member of ${ctx.membership!.organizationName} can see and revoke them.`,
  )}
  ${flashBanner(ctx.flash)}
  ${newKeyPanel(ctx)}
  ${newSecretPanel(ctx)}
  <section class="card" aria-labelledby="create-key-title">
    <h2 id="create-key-title">Create a key</h2>
    ${errors.name || errors.expires ? alert('error', 'The key was not created: please correct the highlighted fields.') : ''}
    <form method="post" action="${DASHBOARD_PATH}/keys" class="form-grid" novalidate>
      ${csrfField(ctx)}
      <div class="field ${errors.name ? 'has-error' : ''}">
        <label for="key-name">Name</label>
        <input id="key-name" name="name" type="text" required maxlength="200" value="${form.name}" placeholder="e.g. Production server"
          aria-describedby="key-name-help${errors.name ? ' key-name-error' : ''}" ${errors.name ? html`aria-invalid="true"` : ''}>
        <p class="hint" id="key-name-help">What or where the key is used, so you know which one to revoke later.</p>
        ${errors.name ? html`<p class="field-error" id="key-name-error">${errors.name}</p>` : ''}
      </div>
      <div class="field ${errors.expires ? 'has-error' : ''}">
        <label for="key-expires">Expires on <span class="optional">(optional)</span></label>
        <input id="key-expires" name="expires" type="date" min="${tomorrow(now)}" value="${form.expires}"
          aria-describedby="key-expires-help${errors.expires ? ' key-expires-error' : ''}" ${errors.expires ? html`aria-invalid="true"` : ''}>
        <p class="hint" id="key-expires-help">The key stops working at the start of that day (UTC). Leave empty for a key that does not expire.</p>
        ${errors.expires ? html`<p class="field-error" id="key-expires-error">${errors.expires}</p>` : ''}
      </div>
      <div class="form-actions"><button type="submit" class="button button-primary">Create key</button></div>
    </form>
  </section>
  <section class="card card-flush" aria-labelledby="key-list-title">
    <div class="card-header">
      <h2 id="key-list-title">Keys</h2>
      <span class="muted">${active} active of ${sorted.length}</span>
    </div>
    ${
      sorted.length === 0
        ? emptyState('No API keys yet', 'Create your first key above, then call the API with it.')
        : html`<div class="table-wrap"><table class="table" id="keys-table">
            <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>${keyRows(ctx, sorted, now)}</tbody>
          </table></div>`
    }
  </section>
  ${signedLinksCard(ctx, view.requireSignedLinks)}`;
  return page({ title: 'API keys', body, assets: view.assets, ctx, section: 'keys' });
}

export function revokeKeyPage(ctx: DashboardContext, assets: Assets, key: ApiKeyRow): SafeHtml {
  const body = html`${pageHeading('Revoke API key')}
  <section class="card confirm-card" aria-labelledby="revoke-title">
    <h2 id="revoke-title">Revoke “${key.name}”?</h2>
    <p>The key <code>${key.prefix}…</code> stops working immediately: every request made with it will get
      <code>401 Invalid API key</code>. This cannot be undone.</p>
    <div class="button-row">
      <form method="post" action="${DASHBOARD_PATH}/keys/${key.id}/revoke" class="inline-form">
        ${csrfField(ctx)}
        <button type="submit" class="button button-danger">Revoke key</button>
      </form>
      <a class="button" href="${DASHBOARD_PATH}/keys">Cancel</a>
    </div>
  </section>`;
  return page({ title: 'Revoke API key', body, assets, ctx, section: 'keys' });
}

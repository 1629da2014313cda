import { html, type SafeHtml } from '../html.js';
import { CSRF_FIELD, DASHBOARD_PATH, type DashboardContext } from '../session.js';
import { alert, page, postButton, type Assets } from './layout.js';

export interface SignInView {
  assets: Assets;
  signInToken: string;
  email?: string;
  next?: string;
  error?: string;
  notice?: string;
}

export function signInPage(view: SignInView): SafeHtml {
  const body = html`<section class="card auth-card" aria-labelledby="sign-in-title">
    <h1 id="sign-in-title">Sign in to your dashboard</h1>
    <p class="muted">Manage API keys, storage and usage of your organization.</p>
    ${view.error ? alert('error', view.error) : ''}
    ${view.notice ? alert('info', view.notice) : ''}
    <form method="post" action="${DASHBOARD_PATH}/sign-in" class="stack" novalidate>
      <input type="hidden" name="${CSRF_FIELD}" value="${view.signInToken}">
      ${view.next ? html`<input type="hidden" name="next" value="${view.next}">` : ''}
      <div class="field">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value="${view.email ?? ''}" ${view.email ? '' : 'autofocus'}>
      </div>
      <div class="field">
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required ${view.email ? 'autofocus' : ''}>
      </div>
      <button type="submit" class="button button-primary button-block">Sign in</button>
    </form>
    <p class="hint">Accounts are created by your operator with <code>daguerre user create</code> and <code>daguerre member add</code>.</p>
  </section>`;
  return page({ title: 'Sign in', body, assets: view.assets });
}

/** The page of a user whose membership in the current organization is switched off. */
export function inactiveMembershipPage(ctx: DashboardContext, assets: Assets): SafeHtml {
  const current = ctx.membership!;
  const others = ctx.memberships.filter((m) => m.active && m.organizationId !== current.organizationId);
  const body = html`<section class="card status-card" aria-labelledby="inactive-title">
    <h1 id="inactive-title">Your membership is inactive</h1>
    <p>Your membership in <strong>${current.organizationName}</strong> has been deactivated, so you can't manage its API keys, storage or usage right now.
      API keys you created for it stop working too (they answer <code>403</code>) until the membership is active again.</p>
    <p class="muted">Ask an owner of ${current.organizationName} to reactivate you, or an operator to run
      <code>daguerre member add</code> again.</p>
    <div class="button-row">
      ${others.map((m) =>
        postButton(
          ctx,
          `${DASHBOARD_PATH}/organization`,
          `Go to ${m.organizationName}`,
          'button button-primary',
          html`<input type="hidden" name="organizationId" value="${m.organizationId}">`,
        ),
      )}
      ${postButton(ctx, `${DASHBOARD_PATH}/sign-out`, 'Sign out', 'button')}
    </div>
  </section>`;
  return page({ title: 'Membership inactive', body, assets, ctx });
}

export function noOrganizationPage(ctx: DashboardContext, assets: Assets): SafeHtml {
  const body = html`<section class="card status-card" aria-labelledby="no-org-title">
    <h1 id="no-org-title">You're not in an organization yet</h1>
    <p>You are signed in as <strong>${ctx.session.userEmail}</strong>, but this account is not a member of any organization.</p>
    <p class="muted">Ask an operator to add you: <code>daguerre member add --org &lt;organization&gt; --user ${ctx.session.userEmail}</code></p>
    <div class="button-row">${postButton(ctx, `${DASHBOARD_PATH}/sign-out`, 'Sign out', 'button')}</div>
  </section>`;
  return page({ title: 'No organization', body, assets, ctx });
}

/** Errors outside the normal flow (403 token refused, 404, 500), with a way back. */
export function messagePage(
  assets: Assets,
  options: { title: string; message: string; ctx?: DashboardContext; action?: { href: string; label: string } },
): SafeHtml {
  const action = options.action ?? { href: `${DASHBOARD_PATH}/usage`, label: 'Back to the dashboard' };
  const body = html`<section class="card status-card" aria-labelledby="message-title">
    <h1 id="message-title">${options.title}</h1>
    <p>${options.message}</p>
    <div class="button-row"><a class="button button-primary" href="${action.href}">${action.label}</a></div>
  </section>`;
  return page({ title: options.title, body, assets, ...(options.ctx ? { ctx: options.ctx } : {}) });
}

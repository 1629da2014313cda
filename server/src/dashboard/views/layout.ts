import { html, trusted, type HtmlValue, type SafeHtml } from '../html.js';
import { CSRF_FIELD, DASHBOARD_PATH, type DashboardContext, type Flash } from '../session.js';

export type Section = 'usage' | 'log' | 'keys' | 'storage' | 'playground' | 'jobs' | 'monitors' | 'batches';

/** Static assets with a content hash in the query, so a new release is never served from cache. */
export interface Assets {
  css: string;
  js: string;
  icon: string;
}

const svg = (body: string) =>
  trusted(
    `<svg class="icon" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round">${body}</svg>`,
  );

export const icons = {
  usage: svg('<path d="M4 20V10M10 20V4M16 20v-7M22 20H2"/>'),
  keys: svg('<circle cx="8" cy="15" r="4"/><path d="M10.8 12.2 20 3M17 6l3 3M15 8l2 2"/>'),
  storage: svg('<ellipse cx="12" cy="5" rx="8" ry="3"/><path d="M4 5v14c0 1.7 3.6 3 8 3s8-1.3 8-3V5M4 12c0 1.7 3.6 3 8 3s8-1.3 8-3"/>'),
  playground: svg('<rect x="3" y="4" width="18" height="14" rx="2"/><path d="m10 8 5 3-5 3zM8 21h8"/>'),
  log: svg('<path d="M8 6h13M8 12h13M8 18h13M3.5 6h.01M3.5 12h.01M3.5 18h.01"/>'),
  jobs: svg('<circle cx="12" cy="12" r="9"/><path d="M12 7v5l3 2"/>'),
  monitors: svg('<path d="M2 12s3.6-7 10-7 10 7 10 7-3.6 7-10 7S2 12 2 12z"/><circle cx="12" cy="12" r="3"/>'),
  batches: svg(
    '<rect x="3" y="3" width="7" height="7" rx="1"/><rect x="14" y="3" width="7" height="7" rx="1"/><rect x="3" y="14" width="7" height="7" rx="1"/><rect x="14" y="14" width="7" height="7" rx="1"/>',
  ),
  docs: svg('<path d="M4 4h10a4 4 0 0 1 4 4v12H8a4 4 0 0 1-4-4z"/><path d="M8 8h6M8 12h6"/>'),
  copy: svg('<rect x="9" y="9" width="11" height="11" rx="2"/><path d="M5 15V5a2 2 0 0 1 2-2h10"/>'),
  check: svg('<path d="m5 12 5 5 9-10"/>'),
  alert: svg('<circle cx="12" cy="12" r="9"/><path d="M12 7v6M12 16.5v.5"/>'),
};

const LOGO = trusted(
  '<svg viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" focusable="false"><rect width="32" height="32" rx="8" class="logo-bg"/><path d="M9 11.5A2.5 2.5 0 0 1 11.5 9h9a2.5 2.5 0 0 1 2.5 2.5v9a2.5 2.5 0 0 1-2.5 2.5h-9A2.5 2.5 0 0 1 9 20.5z" fill="none" stroke="#fff" stroke-width="2"/><circle cx="16" cy="16" r="3.2" fill="#fff"/></svg>',
);

export function csrfField(ctx: DashboardContext): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${ctx.session.csrfToken}">`;
}

/** A one-line POST form whose only control is its button. */
export function postButton(ctx: DashboardContext, action: string, label: HtmlValue, className = 'button', extra: HtmlValue = ''): SafeHtml {
  return html`<form method="post" action="${action}" class="inline-form">${csrfField(ctx)}${extra}<button type="submit" class="${className}">${label}</button></form>`;
}

export function flashBanner(flash: Flash | undefined): SafeHtml {
  if (!flash || flash.about || flash.newKey || flash.newSecret) return html``;
  return alert(flash.kind, flash.message);
}

export function alert(kind: 'success' | 'error' | 'info' | 'warning', message: HtmlValue, title?: string): SafeHtml {
  const role = kind === 'error' ? 'alert' : 'status';
  return html`<div class="alert alert-${kind}" role="${role}">${kind === 'success' ? icons.check : icons.alert}<div>${title ? html`<strong>${title}</strong> ` : ''}${message}</div></div>`;
}

export function emptyState(title: string, text: HtmlValue, action: HtmlValue = ''): SafeHtml {
  return html`<div class="empty"><p class="empty-title">${title}</p><p class="muted">${text}</p>${action}</div>`;
}

export function badge(kind: 'ok' | 'warn' | 'bad' | 'neutral' | 'accent', label: string): SafeHtml {
  return html`<span class="badge badge-${kind}">${label}</span>`;
}

interface PageOptions {
  title: string;
  body: SafeHtml;
  assets: Assets;
  /** Signed-in chrome (header, navigation); without it, a centred card page. */
  ctx?: DashboardContext;
  section?: Section;
  status?: number;
}

const NAV: { section: Section; label: string }[] = [
  { section: 'usage', label: 'Usage' },
  { section: 'log', label: 'Request log' },
  { section: 'keys', label: 'API keys' },
  { section: 'storage', label: 'Storage' },
  { section: 'playground', label: 'Playground' },
  { section: 'jobs', label: 'Jobs' },
  { section: 'monitors', label: 'Monitors' },
  { section: 'batches', label: 'Batches' },
];

function organizationSwitcher(ctx: DashboardContext): SafeHtml {
  const current = ctx.membership;
  if (!current) return html``;
  if (ctx.memberships.length < 2) return html`<span class="org-name" title="Organization">${current.organizationName}</span>`;
  return html`<form method="post" action="${DASHBOARD_PATH}/organization" class="org-switcher" data-autosubmit>
    ${csrfField(ctx)}
    <label class="visually-hidden" for="org-select">Organization</label>
    <select id="org-select" name="organizationId">
      ${ctx.memberships.map(
        (m) =>
          html`<option value="${m.organizationId}" ${m.organizationId === current.organizationId ? 'selected' : ''}>${m.organizationName}${m.active ? '' : ' (inactive)'}</option>`,
      )}
    </select>
    <button type="submit" class="button button-small button-ghost js-hidden">Switch</button>
  </form>`;
}

function header(ctx: DashboardContext): SafeHtml {
  return html`<header class="topbar">
    <a class="brand" href="${DASHBOARD_PATH}/usage">${LOGO}<span>Daguerre</span></a>
    <div class="topbar-org">${organizationSwitcher(ctx)}</div>
    <div class="topbar-user">
      <span class="user-email" title="Signed in as ${ctx.session.userEmail}">${ctx.session.userEmail}</span>
      ${postButton(ctx, `${DASHBOARD_PATH}/sign-out`, 'Sign out', 'button button-small button-ghost')}
    </div>
  </header>`;
}

function navigation(section: Section | undefined, showSections: boolean): SafeHtml {
  return html`<nav class="sidebar" aria-label="Dashboard">
    <ul>
      ${
        showSections
          ? NAV.map(
              (item) =>
                html`<li><a href="${DASHBOARD_PATH}/${item.section}" ${item.section === section ? trusted('aria-current="page"') : ''}>${icons[item.section]}<span>${item.label}</span></a></li>`,
            )
          : ''
      }
      <li class="nav-secondary"><a href="/docs">${icons.docs}<span>API reference</span></a></li>
    </ul>
  </nav>`;
}

export function page(options: PageOptions): SafeHtml {
  const { ctx, assets } = options;
  const signedIn = Boolean(ctx);
  const showSections = Boolean(ctx?.membership?.active);
  const content = signedIn
    ? html`${header(ctx!)}
        <div class="shell">
          ${navigation(options.section, showSections)}
          <main id="main" class="content" tabindex="-1">${options.body}</main>
        </div>`
    : html`<main id="main" class="center-page" tabindex="-1">
        <a class="brand brand-large" href="${DASHBOARD_PATH}">${LOGO}<span>Daguerre</span></a>
        ${options.body}
      </main>`;
  return html`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="color-scheme" content="light dark">
  <title>${options.title} · Daguerre</title>
  <link rel="icon" href="${assets.icon}" type="image/svg+xml">
  <link rel="stylesheet" href="${assets.css}">
  <script src="${assets.js}" defer></script>
</head>
<body class="${signedIn ? 'signed-in' : 'signed-out'}">
  <a class="skip-link" href="#main">Skip to content</a>
  ${content}
</body>
</html>`;
}

export function pageHeading(title: string, description: HtmlValue = '', actions: HtmlValue = ''): SafeHtml {
  return html`<div class="page-heading">
    <div><h1>${title}</h1>${description ? html`<p class="lead">${description}</p>` : ''}</div>
    ${actions ? html`<div class="page-actions">${actions}</div>` : ''}
  </div>`;
}

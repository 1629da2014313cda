import { $, required, valueOf } from '../dom.js';
import { requestParams } from './request-params.js';

/**
 * The Playground's signed link (docs/signed-links.md): signed by the dashboard's server with the
 * chosen key's secret, which never comes to the browser. Asked for a quarter of a second after the
 * last change, and only the newest answer is shown.
 */
export function startSignedLink(form: HTMLFormElement): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let latest = 0;
  const sign = async () => {
    const output = required('#pg-signed-url');
    const query = signedQuery(form);
    if (!query) {
      output.textContent = 'Enter a URL or HTML to make a signed link.';
      output.setAttribute('data-ready', 'false');
      return;
    }
    const current = ++latest;
    try {
      const answer = await requestSignedLink(query);
      if (current !== latest) return;
      output.textContent = answer.url ? window.location.origin + answer.url : answer.error || 'The link could not be made.';
      output.setAttribute('data-ready', answer.url ? 'true' : 'false');
    } catch (error) {
      if (current === latest) output.textContent = 'The link could not be made: ' + (error as Error).message;
    }
  };
  const schedule = () => {
    const key = $<HTMLSelectElement>('#pg-signed-key');
    if (!key || !key.value) return;
    clearTimeout(timer);
    timer = setTimeout(sign, 250);
  };
  ['#pg-signed-key', '#pg-signed-expires'].forEach((selector) => {
    $(selector)?.addEventListener('change', schedule);
  });
  return schedule;
}

/** The capture's query string, or null while there is nothing to capture. */
function signedQuery(form: HTMLFormElement): string | null {
  const list = requestParams(form);
  if (!(list[0] as (typeof list)[number])[1]) return null;
  const query = new URLSearchParams();
  list.forEach(([name, value]) => {
    query.append(name, String(value));
  });
  return query.toString();
}

/** The dashboard's own route (signed-link-routes.ts), under the session and its form token. */
async function requestSignedLink(query: string): Promise<{ url?: string; error?: string }> {
  const body = new URLSearchParams();
  body.set('_csrf', valueOf('#pg-signed-csrf input[name="_csrf"]'));
  body.set('keyId', valueOf('#pg-signed-key'));
  body.set('expiresIn', valueOf('#pg-signed-expires'));
  body.set('query', query);
  const response = await fetch(window.location.pathname.replace(/\/playground$/, '/playground/signed-link'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
    credentials: 'same-origin',
  });
  return (await response.json()) as { url?: string; error?: string };
}

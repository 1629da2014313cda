import type { HTTPResponse, Page } from 'puppeteer-core';

/**
 * Recognizes anti-bot interstitials (spec rule 2: fail at once with TARGET_PROTECTED). A page that
 * merely embeds a captcha widget in its own form is not an interstitial: the captcha must be the
 * page's main content (little visible text, no other form fields) to count.
 */
export interface ProtectionVerdict {
  protected: boolean;
  vendor?: string;
}

/**
 * Whole titles of the vendors' interstitials, anchored at both ends: an article titled "Just a
 * moment in history" is not a challenge. Localized challenge pages are caught by their markup.
 */
const INTERSTITIAL_TITLES: Array<[RegExp, string]> = [
  [/^just a moment(\.\.\.|…)?$/i, 'Cloudflare'],
  [/^attention required!? \| cloudflare$/i, 'Cloudflare'],
  [/^checking your browser before accessing\b/i, 'Cloudflare'],
  [/^access to this page has been denied\.?$/i, 'PerimeterX'],
  [/^pardon our interruption\.?$/i, 'Imperva'],
];

function fromResponse(response: HTTPResponse | null): ProtectionVerdict | undefined {
  if (!response) return undefined;
  const headers = response.headers();
  if ((headers['cf-mitigated'] ?? '').toLowerCase() === 'challenge') return { protected: true, vendor: 'Cloudflare' };
  if (headers['x-datadome'] !== undefined && response.status() === 403) return { protected: true, vendor: 'DataDome' };
  return undefined;
}

/** Runs in the page: collects the markers without sending anything anywhere. */
function collectMarkers() {
  const frames = Array.from(document.querySelectorAll('iframe')).map((f) => f.getAttribute('src') ?? '');
  const scripts = Array.from(document.querySelectorAll('script[src]')).map((s) => s.getAttribute('src') ?? '');
  const fields = Array.from(document.querySelectorAll('input, textarea, select')).filter((el) => {
    const type = (el.getAttribute('type') ?? '').toLowerCase();
    const name = el.getAttribute('name') ?? '';
    return type !== 'hidden' && !/captcha|turnstile|cf-/i.test(name);
  }).length;
  const captchaWidget =
    Boolean(document.querySelector('.g-recaptcha, .h-captcha, .cf-turnstile, [data-sitekey]')) ||
    frames.some((src) => /recaptcha|hcaptcha|challenges\.cloudflare\.com/i.test(src));
  // innerText lays out and serializes the whole page (measurable on every capture): read only
  // when it decides something, for a captcha with nothing else to fill in.
  const textLength =
    captchaWidget && fields === 0 ? (document.body?.innerText ?? '').replace(/\s+/g, ' ').trim().length : Number.POSITIVE_INFINITY;
  return {
    title: document.title,
    textLength,
    fields,
    cloudflareChallenge: Boolean(
      document.querySelector('#challenge-form, #challenge-running, #cf-challenge-running, #challenge-stage, .cf-browser-verification') ||
      (window as unknown as { _cf_chl_opt?: unknown })._cf_chl_opt,
    ),
    perimeterX: Boolean(document.querySelector('#px-captcha')),
    dataDome: frames.some((src) => /captcha-delivery\.com/i.test(src)) || scripts.some((src) => /captcha-delivery\.com/i.test(src)),
    captchaWidget,
  };
}

export async function detectProtection(page: Page, response: HTTPResponse | null): Promise<ProtectionVerdict> {
  const byResponse = fromResponse(response);
  if (byResponse) return byResponse;
  const markers = await page.evaluate(collectMarkers);
  for (const [pattern, vendor] of INTERSTITIAL_TITLES) if (pattern.test(markers.title.trim())) return { protected: true, vendor };
  if (markers.cloudflareChallenge) return { protected: true, vendor: 'Cloudflare' };
  if (markers.perimeterX) return { protected: true, vendor: 'PerimeterX' };
  if (markers.dataDome) return { protected: true, vendor: 'DataDome' };
  // A captcha that is the whole page: little text and nothing else to fill in.
  if (markers.captchaWidget && markers.fields === 0 && markers.textLength < 600) return { protected: true, vendor: 'captcha interstitial' };
  return { protected: false };
}

import {
  DEVICE_PRESETS,
  FORMATS,
  LIMITS,
  MEDIA_TYPES,
  PDF_FORMATS,
  PDF_PAGE_LAYOUTS,
  THEMES,
  WAIT_UNTIL,
  type DeviceGroup,
} from '@daguerre/contract';
import { html, type SafeHtml } from '../html.js';
import { DASHBOARD_PATH, type DashboardContext } from '../session.js';
import type { ApiKeyRow } from '../../store/api-key-repository.js';
import { icons, page, pageHeading, type Assets } from './layout.js';
import { signedLinkCard } from './signed-link-card.js';

const SAMPLE_HTML = '<h1 style="font-family:system-ui;color:#4338ca">Hello from Daguerre</h1>';

const GROUPS: DeviceGroup[] = ['Desktop', 'iPhone', 'Samsung', 'Pixel', 'iPad', 'Other tablet'];

function deviceOptions(): SafeHtml {
  return html`<optgroup label="Categories">
      <option value="desktop" selected>desktop (1920×1080)</option>
      <option value="mobile">mobile (iPhone 15)</option>
      <option value="tablet">tablet (iPad Air)</option>
    </optgroup>
    ${GROUPS.map(
      (group) =>
        html`<optgroup label="${group}">${DEVICE_PRESETS.filter((d) => d.group === group).map(
          (d) => html`<option value="${d.id}">${d.id} (${d.width}×${d.height} @${d.scale}x)</option>`,
        )}</optgroup>`,
    )}`;
}

const select = (id: string, values: readonly string[], selected: string) =>
  html`<select id="${id}" name="${id}">${values.map((v) => html`<option value="${v}" ${v === selected ? 'selected' : ''}>${v}</option>`)}</select>`;

export function playgroundPage(ctx: DashboardContext, assets: Assets, hasActiveKey: boolean, activeKeys: ApiKeyRow[] = []): SafeHtml {
  const body = html`${pageHeading(
    'Playground',
    'Try capture options against the live API with one of your keys, then copy the request as curl or TypeScript.',
  )}
  <noscript><div class="alert alert-warning" role="status">The Playground needs JavaScript. Everything else in the dashboard works without it.</div></noscript>
  <div class="playground">
    <form id="playground-form" class="card stack playground-form" novalidate>
      <fieldset class="stack">
        <legend>API key</legend>
        <div class="field">
          <label for="pg-key">Key to call the API with</label>
          <div class="input-group">
            <input id="pg-key" type="password" class="mono" autocomplete="off" spellcheck="false" placeholder="rs_…" aria-describedby="pg-key-help">
            <button type="button" class="button button-ghost" id="pg-key-forget">Forget</button>
          </div>
          <p class="hint" id="pg-key-help">Keys are shown only when created, so paste one here. It stays in this browser tab only (sessionStorage) and is sent to <code>/capture</code> as <code>X-API-Key</code>.
            ${hasActiveKey ? '' : html`You have no active key yet: <a href="${DASHBOARD_PATH}/keys">create one</a>.`}</p>
        </div>
      </fieldset>
      <fieldset class="stack">
        <legend>Source</legend>
        <div class="segmented" role="radiogroup" aria-label="Capture source">
          <input type="radio" id="pg-source-url" name="source" value="url" checked><label for="pg-source-url">Web page</label>
          <input type="radio" id="pg-source-html" name="source" value="html"><label for="pg-source-html">HTML</label>
        </div>
        <div class="field" data-source="url">
          <label for="pg-url">URL</label>
          <input id="pg-url" name="url" type="url" class="mono" placeholder="https://example.com" spellcheck="false" maxlength="${LIMITS.urlMaxLength}">
        </div>
        <div class="field" data-source="html" hidden>
          <label for="pg-html">HTML</label>
          <textarea id="pg-html" name="html" rows="6" class="mono" spellcheck="false" maxlength="${LIMITS.htmlMaxLength}">${SAMPLE_HTML}</textarea>
        </div>
      </fieldset>
      <fieldset class="stack">
        <legend>Output</legend>
        <div class="field-row">
          <div class="field"><label for="format">Format</label>${select('format', FORMATS, 'png')}</div>
          <div class="field" data-format="jpeg webp"><label for="imageQuality">Quality</label>
            <input id="imageQuality" name="imageQuality" type="number" min="${LIMITS.imageQualityMin}" max="${LIMITS.imageQualityMax}" placeholder="90"></div>
        </div>
        <div class="field"><label for="device">Device</label><select id="device" name="device">${deviceOptions()}</select></div>
        <div class="field-row">
          <div class="field"><label for="viewportWidth">Viewport width</label>
            <input id="viewportWidth" name="viewportWidth" type="number" min="${LIMITS.viewportMin}" max="${LIMITS.viewportMax}" placeholder="device"></div>
          <div class="field"><label for="viewportHeight">Viewport height</label>
            <input id="viewportHeight" name="viewportHeight" type="number" min="${LIMITS.viewportMin}" max="${LIMITS.viewportMax}" placeholder="device"></div>
        </div>
        <div class="stack" data-format="pdf">
          <div class="field-row">
            <div class="field"><label for="pdfPageLayout">PDF layout</label>${select('pdfPageLayout', PDF_PAGE_LAYOUTS, 'paginated')}</div>
            <div class="field"><label for="pdfFormat">Paper</label>${select('pdfFormat', PDF_FORMATS, 'A4')}</div>
            <div class="field"><label for="pdfScale">Scale</label><input id="pdfScale" name="pdfScale" type="number" min="0.1" max="2" step="0.1" placeholder="1"></div>
          </div>
          <div class="field-row">
            <div class="field"><label for="pdfMargin">Margin</label><input id="pdfMargin" name="pdfMargin" type="text" class="mono" placeholder="12mm / 10mm"></div>
            <div class="field"><label for="pdfPageRanges">Pages</label><input id="pdfPageRanges" name="pdfPageRanges" type="text" class="mono" placeholder="1-3,5"></div>
          </div>
          <div class="field"><label for="pdfHeaderTemplate">Header template (HTML)</label><input id="pdfHeaderTemplate" name="pdfHeaderTemplate" type="text" class="mono" placeholder='&lt;div style="font-size:9px"&gt;&lt;span class="title"&gt;&lt;/span&gt;&lt;/div&gt;'></div>
          <div class="field"><label for="pdfFooterTemplate">Footer template (HTML)</label><input id="pdfFooterTemplate" name="pdfFooterTemplate" type="text" class="mono" placeholder='&lt;div style="font-size:9px"&gt;&lt;span class="pageNumber"&gt;&lt;/span&gt;/&lt;span class="totalPages"&gt;&lt;/span&gt;&lt;/div&gt;'></div>
          <p class="hint">Header and footer templates cannot load anything: inline fonts and images. Only the background option applies to the single layout.</p>
          <div class="field field-check"><input id="pdfLandscape" name="pdfLandscape" type="checkbox"><label for="pdfLandscape">Landscape</label></div>
          <div class="field field-check"><input id="pdfPrintBackground" name="pdfPrintBackground" type="checkbox" checked><label for="pdfPrintBackground">Print backgrounds</label></div>
          <div class="field field-check"><input id="pdfPreferCssPageSize" name="pdfPreferCssPageSize" type="checkbox"><label for="pdfPreferCssPageSize">Prefer the page's CSS @page size</label></div>
        </div>
        <div class="field field-check"><input id="fullPage" name="fullPage" type="checkbox"><label for="fullPage">Full page <span class="hint-inline">(the whole page, not just the viewport)</span></label></div>
        <div class="field-row">
          <div class="field"><label for="theme">Theme</label>${select('theme', THEMES, 'auto')}</div>
          <div class="field"><label for="waitUntil">Wait until</label>${select('waitUntil', WAIT_UNTIL, 'load')}</div>
        </div>
        <div class="field-row">
          <div class="field"><label for="delay">Delay (ms)</label><input id="delay" name="delay" type="number" min="0" max="${LIMITS.delayMaxMs}" step="100" placeholder="0"></div>
          <div class="field"><label for="waitForSelector">Wait for selector</label><input id="waitForSelector" name="waitForSelector" type="text" class="mono" placeholder="#content"></div>
        </div>
        <div class="field-row">
          <div class="field"><label for="hideSelectors">Hide selectors</label><input id="hideSelectors" name="hideSelectors" type="text" class="mono" placeholder=".chat-widget, #promo"></div>
          <div class="field"><label for="styles">Styles (CSS)</label><input id="styles" name="styles" type="text" class="mono" placeholder="body { font-size: 18px }"></div>
        </div>
        <div class="field"><label for="scripts">Script (JavaScript, run before capture)</label><input id="scripts" name="scripts" type="text" class="mono" placeholder="document.body.classList.add('print')"></div>
        <div class="field-row">
          <div class="field"><label for="click">Click selector</label><input id="click" name="click" type="text" class="mono" placeholder="#load-more"></div>
          <div class="field"><label for="scrollIntoView">Scroll into view</label><input id="scrollIntoView" name="scrollIntoView" type="text" class="mono" placeholder="#pricing"></div>
        </div>
        <div class="field-row">
          <div class="field"><label for="timezone">Time zone</label><input id="timezone" name="timezone" type="text" class="mono" placeholder="Europe/Paris"></div>
          <div class="field"><label for="locale">Locale</label><input id="locale" name="locale" type="text" class="mono" placeholder="fr-FR"></div>
          <div class="field"><label for="mediaType">Media type</label>${select('mediaType', ['', ...MEDIA_TYPES], '')}</div>
        </div>
        <div class="field field-check"><input id="reducedMotion" name="reducedMotion" type="checkbox"><label for="reducedMotion">Reduced motion <span class="hint-inline">(animations finished)</span></label></div>
        <div class="field field-check"><input id="failOnHttpError" name="failOnHttpError" type="checkbox"><label for="failOnHttpError">Fail on HTTP error <span class="hint-inline">(4xx/5xx target: 502, free)</span></label></div>
        <div class="field field-check"><input id="removeCookieBanners" name="removeCookieBanners" type="checkbox"><label for="removeCookieBanners">Remove cookie banners</label></div>
        <div class="field field-check"><input id="removeAds" name="removeAds" type="checkbox"><label for="removeAds">Remove ads</label></div>
        <div class="field field-check"><input id="metadata" name="metadata" type="checkbox"><label for="metadata">Page metadata <span class="hint-inline">(title, OpenGraph, fonts, status, errors)</span></label></div>
        <div class="field field-check"><input id="failOnBlank" name="failOnBlank" type="checkbox"><label for="failOnBlank">Fail on blank <span class="hint-inline">(a blank capture: 422, free)</span></label></div>
      </fieldset>
      <div class="form-actions">
        <button type="submit" class="button button-primary" id="pg-submit">Capture</button>
        <span class="hint" id="pg-cost">A successful capture uses credits; failed ones are free.</span>
      </div>
    </form>
    <div class="playground-output stack">
      <section class="card" aria-labelledby="pg-result-title">
        <div class="card-header"><h2 id="pg-result-title">Result</h2><span class="muted" id="pg-status" aria-live="polite"></span></div>
        <div id="pg-result" class="pg-result" aria-live="polite">
          <p class="muted pg-placeholder">Run a capture to see it here.</p>
        </div>
      </section>
      <section class="card" aria-labelledby="pg-insight-title">
        <div class="card-header"><h2 id="pg-insight-title">Quality and metadata</h2><span class="muted" id="pg-quality" aria-live="polite"></span></div>
        <div id="pg-insight" class="pg-insight stack"><p class="muted">The capture's quality report (and its metadata, when asked) appear here.</p></div>
      </section>
      <section class="card" aria-labelledby="pg-code-title">
        <div class="card-header"><h2 id="pg-code-title">Code</h2>
          <div class="tabs" role="tablist" aria-label="Code language">
            <button type="button" role="tab" id="tab-curl" aria-controls="code-curl" aria-selected="true">curl</button>
            <button type="button" role="tab" id="tab-ts" aria-controls="code-ts" aria-selected="false" tabindex="-1">TypeScript</button>
          </div>
        </div>
        <div class="code-block" id="code-curl" role="tabpanel" aria-labelledby="tab-curl">
          <button type="button" class="button button-small copy-code" data-copy="#pg-curl">${icons.copy}<span>Copy</span></button>
          <pre><code id="pg-curl"></code></pre>
        </div>
        <div class="code-block" id="code-ts" role="tabpanel" aria-labelledby="tab-ts" hidden>
          <button type="button" class="button button-small copy-code" data-copy="#pg-ts">${icons.copy}<span>Copy</span></button>
          <pre><code id="pg-ts"></code></pre>
        </div>
        <p class="hint">The snippets read the key from <code>DAGUERRE_API_KEY</code> so it does not end up in your shell history or source.</p>
      </section>
      ${signedLinkCard(ctx, activeKeys)}
    </div>
  </div>`;
  return page({ title: 'Playground', body, assets, ctx, section: 'playground' });
}

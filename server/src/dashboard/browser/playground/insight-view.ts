import type { CaptureQuality, PageMetadata } from '@daguerre/contract';
import { required } from '../dom.js';

/**
 * The quality report and the page's metadata beside the result (docs/page-insight.md). Everything
 * the captured page wrote (titles, messages) goes in as text, never as markup.
 */

/** A pdf comes as the file itself: its quality is only in the X-Capture-Quality headers. */
export interface HeaderQuality {
  value: string | null;
  findings: string | null;
}

interface Finding {
  check: string;
  message: string;
}

export function showInsight(
  quality: CaptureQuality | null,
  metadata: PageMetadata | null | undefined,
  headerQuality: HeaderQuality | null,
): void {
  const box = required('#pg-insight');
  box.innerHTML = '';
  const ok = quality ? quality.ok : headerQuality?.value === 'ok';
  required('#pg-quality').textContent = ok ? 'Quality: ok' : 'Quality: warn';
  const heading = document.createElement('p');
  heading.textContent = ok ? 'No quality problem found.' : 'Quality findings:';
  box.appendChild(heading);
  const findings = quality ? quality.findings : headerFindings(headerQuality);
  if (findings.length) box.appendChild(findingList(findings));
  if (!metadata) return;
  box.appendChild(metadataList(metadata));
}

/** X-Capture-Quality-Findings names the checks, without their messages. */
function headerFindings(headerQuality: HeaderQuality | null): Finding[] {
  if (!headerQuality?.findings) return [];
  return headerQuality.findings.split(',').map((check) => ({ check, message: '' }));
}

function findingList(findings: Finding[]): HTMLUListElement {
  const list = document.createElement('ul');
  list.className = 'pg-findings';
  findings.forEach((finding) => {
    const item = document.createElement('li');
    const check = document.createElement('strong');
    check.textContent = finding.check;
    item.appendChild(check);
    item.appendChild(document.createTextNode(finding.message ? ': ' + finding.message : ''));
    list.appendChild(item);
  });
  return list;
}

function metadataList(metadata: PageMetadata): HTMLDListElement {
  const dl = document.createElement('dl');
  const term = (name: string, value: unknown) => appendTerm(dl, name, value);
  term('Title', metadata.title);
  term('Description', metadata.description);
  term('Canonical URL', metadata.canonicalUrl);
  term('Language', metadata.language);
  term('HTTP status', metadata.httpStatus);
  const openGraph: Record<string, unknown> = metadata.openGraph || {};
  Object.keys(openGraph).forEach((name) => term('og:' + name, openGraph[name]));
  const twitter: Record<string, unknown> = metadata.twitter || {};
  Object.keys(twitter).forEach((name) => term('twitter:' + name, twitter[name]));
  term('Icons', (metadata.icons || []).map((icon) => icon.href).join(' '));
  term('Fonts', (metadata.fonts || []).map((font) => font.family + (font.webFont ? ' (web font)' : '')).join(', '));
  term('Redirects', (metadata.redirects || []).map((hop) => hop.status + ' ' + hop.url).join(' → '));
  const { consoleErrors, failedRequests, timings } = metadata;
  const firstError = consoleErrors.first[0];
  term('Console errors', consoleErrors.count + (firstError ? ' (first: ' + firstError.message + ')' : ''));
  const firstFailure = failedRequests.first[0];
  term('Failed requests', failedRequests.count + (firstFailure ? ' (first: ' + firstFailure.url + ', ' + firstFailure.reason + ')' : ''));
  term(
    'Timings',
    'navigation ' +
      timings.navigation +
      ' ms · load ' +
      (timings.load === null ? '–' : timings.load + ' ms') +
      ' · wait ' +
      timings.wait +
      ' ms · capture ' +
      timings.capture +
      ' ms',
  );
  term('SHA-256', metadata.sha256);
  return dl;
}

/** A name and its value, left out when the page had none. */
function appendTerm(list: HTMLDListElement, name: string, value: unknown): void {
  if (value === null || value === undefined || value === '') return;
  const dt = document.createElement('dt');
  dt.textContent = name;
  const dd = document.createElement('dd');
  dd.textContent = String(value);
  list.appendChild(dt);
  list.appendChild(dd);
}

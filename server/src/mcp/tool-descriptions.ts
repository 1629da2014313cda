import {
  FORMATS,
  MIME_TYPES,
  pageActionFields,
  pageInsightFields,
  pdfFields,
  VIDEO_LIMITS,
  videoFields,
  type CaptureFormat,
} from '@daguerre/contract';
import { kindOf, type FileKind, type InlineBudget } from './delivery.js';
import { captureToolInput } from './tool-inputs.js';

/**
 * The words an agent reads about the capture tools (tool descriptions and the server's
 * instructions), written from the contract: every output format with what comes back for it, and
 * every option name, so a format or option added to the contract is named here by itself. The
 * options' own descriptions are in the input schema and in describe_options.
 */

export function formatsOfKind(kind: FileKind): CaptureFormat[] {
  return FORMATS.filter((format) => kindOf(MIME_TYPES[format]) === kind);
}

const names = (fields: object) => Object.keys(fields);

/** Option groups by the contract module each comes from; the rest are page and browser options. */
const GROUPS: Array<{ label: string; member: (name: string) => boolean }> = [
  { label: 'what to capture', member: (name) => ['url', 'html', 'format'].includes(name) },
  { label: 'pdf', member: (name) => name === 'pdfPageLayout' || names(pdfFields).includes(name) },
  { label: 'video (mp4, webm, gif)', member: (name) => names(videoFields).includes(name) },
  { label: 'page actions', member: (name) => names(pageActionFields).includes(name) },
  { label: 'page insight and AI', member: (name) => names(pageInsightFields).includes(name) || name.startsWith('openai') },
  { label: 'proxy, cache and storage', member: (name) => /^(proxy|cache|requestStorage)/.test(name) },
  { label: 'how the result comes back', member: (name) => name === 'delivery' },
];

/** Every option of `capture`, grouped: "what to capture: url, html, format; page and browser: …". */
export function optionSummary(): string {
  const all = Object.keys(captureToolInput.shape);
  const rest = all.filter((name) => !GROUPS.some((group) => group.member(name)));
  const grouped = GROUPS.map((group) => ({ label: group.label, members: all.filter(group.member) }));
  grouped.splice(1, 0, { label: 'page and browser', members: rest });
  return grouped
    .filter((group) => group.members.length > 0)
    .map((group) => `${group.label}: ${group.members.join(', ')}`)
    .join('; ');
}

/** What each format gives the agent, as capture and get_capture return it (docs/mcp.md has the table). */
export function formatSummary(budget: InlineBudget): string {
  const images = formatsOfKind('image').join(', ');
  const texts = formatsOfKind('text').join(', ');
  const binaries = formatsOfKind('binary').join(', ');
  return (
    `${images}: the image inline as image content up to ${budget.maxBytes} bytes and ${budget.maxSidePx} px on a side, else a resource_link. ` +
    `${texts}: the page's content inline as text up to ${Math.floor(budget.maxBytes / 2)} bytes (also in structuredContent.text), else a resource_link. ` +
    `${binaries}: a resource_link. ` +
    'A resource_link names <service>/captures/{jobId}/file: read it with resources/read (text formats as text, the others as a base64 blob) or download it with GET and the same API key (header X-API-Key).'
  );
}

const STRUCTURED =
  'structuredContent always has id, status, url, contentType, bytes, width, height, delivery, page (what the capture saw: status, finalUrl, title, size, truncation) and quality (the quality report: blank page, images not loaded, overlays, fonts, still growing); metadata with metadata=true; aiResult with openaiPrompt.';

export function captureDescription(budget: InlineBudget, waitSeconds: number): string {
  return (
    `Captures a web page (url) or inline HTML (html) in headless Chromium, exactly one of the two, in one of the formats ${FORMATS.join(', ')} (format, default png). ` +
    `What comes back: ${formatSummary(budget)} ${STRUCTURED} ` +
    `Waits up to ${waitSeconds} s; a longer capture answers with its jobId for get_capture. Costs 1 credit when it succeeds (a video 1 per started ${VIDEO_LIMITS.creditSeconds} s), nothing when it fails. ` +
    `Options (describe_options gives each one's type, default and rules): ${optionSummary()}.`
  );
}

export function getCaptureDescription(budget: InlineBudget): string {
  return (
    'The state of a capture queued by capture_async (or by capture when it ran long): queued, active, failed (with the error) or succeeded, then the file the way capture returns it. ' +
    `${formatSummary(budget)} ${STRUCTURED} Costs nothing.`
  );
}

export function serverInstructions(budget: InlineBudget): string {
  return (
    `Daguerre captures web pages and HTML in headless Chromium as images (${formatsOfKind('image').join(', ')}), as the page's text (${formatsOfKind('text').join(', ')}) or as files (${formatsOfKind('binary').join(', ')}). ` +
    'Use capture for a capture you want back now, capture_async + get_capture for long or many captures, usage for the credits left, describe_options for every option with its default. ' +
    `Results: ${formatSummary(budget)} ` +
    `Options of capture: ${optionSummary()}.`
  );
}
/** The hints a tool that captures declares to the agent: it reads, reaches the open web, and each call is a new capture. */
export const CAPTURE_ANNOTATIONS = { readOnlyHint: true, openWorldHint: true, destructiveHint: false, idempotentHint: false };

import { html, type SafeHtml } from '../html.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** "5 Mar 2025" (UTC). */
export function formatDate(epochMs: number): string {
  const d = new Date(epochMs);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** "5 Mar 2025, 14:03 UTC". */
export function formatDateTime(epochMs: number): string {
  const d = new Date(epochMs);
  return `${formatDate(epochMs)}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/**
 * A <time> in UTC that the page's script rewrites into the reader's time zone; without script,
 * the UTC text stays and is still right.
 */
export function time(epochMs: number | null | undefined, style: 'date' | 'datetime' = 'datetime', empty = '—'): SafeHtml {
  if (epochMs === null || epochMs === undefined) return html`<span class="muted">${empty}</span>`;
  const iso = new Date(epochMs).toISOString();
  return html`<time datetime="${iso}" data-local="${style}" title="${iso}">${style === 'date' ? formatDate(epochMs) : formatDateTime(epochMs)}</time>`;
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export function formatNumber(n: number): string {
  return n.toLocaleString('en-US');
}

/** A rate-limit window in words: "minute", "hour", "5 min", "30 s". */
export function formatWindow(windowMs: number): string {
  const seconds = windowMs / 1000;
  if (seconds === 60) return 'minute';
  if (seconds === 3600) return 'hour';
  if (seconds === 86_400) return 'day';
  return seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatNumber(n)} ${n === 1 ? one : many}`;
}

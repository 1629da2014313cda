import type { CaptureDiff, Monitor, MonitorRun } from '@daguerre/contract';
import { redactUrl } from '../../security/redaction.js';
import { html, type SafeHtml } from '../html.js';
import { DASHBOARD_PATH } from '../session.js';
import { badge } from './layout.js';

/** What the monitors' pages share: addresses, badges and numbers in words. */

export const monitorsHref = `${DASHBOARD_PATH}/monitors`;
export const monitorHref = (monitorId: string) => `${monitorsHref}/${monitorId}`;
export const runHref = (monitorId: string, runId: string) => `${monitorHref(monitorId)}/runs/${runId}`;
/** A run's capture, streamed under the session (never with an API key in the page). */
export const runImageHref = (monitorId: string, runId: string) => `${runHref(monitorId, runId)}/image`;
export const runDiffHref = (monitorId: string, runId: string) => `${runHref(monitorId, runId)}/diff`;

/** "every 5 min", "every 90 s", "every 2 h", "every day". */
export function formatInterval(seconds: number): string {
  const units: [number, string, string][] = [
    [86_400, 'day', 'days'],
    [3_600, 'h', 'h'],
    [60, 'min', 'min'],
  ];
  for (const [size, one, many] of units) {
    if (seconds % size === 0) {
      const count = seconds / size;
      return count === 1 ? `every ${size === 86_400 ? 'day' : `1 ${one}`}` : `every ${count} ${many}`;
    }
  }
  return `every ${seconds} s`;
}

/** A percentage as people read it: "0 %", "0.03 %", "12.5 %". */
export function formatPercent(percent: number): string {
  if (percent === 0) return '0 %';
  if (percent < 0.01) return '< 0.01 %';
  return `${Number(percent.toFixed(percent < 1 ? 2 : 1))} %`;
}

/** The URL as the logs show it: secret-looking query values masked. */
export const shownUrl = (url: string) => redactUrl(url);

export function monitorStateBadge(monitor: Monitor): SafeHtml {
  if (!monitor.paused) return badge('ok', 'Active');
  return badge(
    monitor.pausedReason === 'credits' ? 'bad' : 'warn',
    monitor.pausedReason === 'credits' ? 'Paused: out of credits' : 'Paused',
  );
}

export function runStatusBadge(run: MonitorRun): SafeHtml {
  if (run.status === 'running') return badge('accent', 'Running');
  if (run.status === 'failed') return badge('bad', 'Failed');
  return badge('ok', 'Succeeded');
}

/** The diff in a badge: changed past the threshold (warn), under it (neutral), or no baseline yet. */
export function diffBadge(diff: CaptureDiff | null, run: MonitorRun): SafeHtml {
  if (run.status !== 'succeeded') return html``;
  if (!diff) return badge('neutral', 'First run');
  return diff.changed
    ? html`<span class="badge badge-warn" title="${formatPercent(diff.diffPercent)} of the pixels changed, threshold ${formatPercent(diff.threshold)}">Changed ${formatPercent(diff.diffPercent)}</span>`
    : html`<span class="badge badge-neutral" title="Threshold ${formatPercent(diff.threshold)}">${formatPercent(diff.diffPercent)}</span>`;
}

export function textChanges(diff: CaptureDiff | null): SafeHtml {
  if (!diff || (diff.textAdded.length === 0 && diff.textRemoved.length === 0)) return html``;
  return html`<span class="monitor-text-count" title="Lines of text added and removed"><span class="text-added">+${diff.textAdded.length}</span> <span class="text-removed">−${diff.textRemoved.length}</span></span>`;
}

export const epoch = (iso: string | null) => (iso === null ? null : Date.parse(iso));

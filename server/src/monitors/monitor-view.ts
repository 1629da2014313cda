import type { Monitor, MonitorRun } from '@daguerre/contract';
import type { MonitorRecord } from '../store/monitor-repository.js';
import type { MonitorRunRecord } from '../store/monitor-run-repository.js';

/** Where a run's files are served (http/monitor-routes.ts), on the address the monitor was created at. */
export const runImagePath = (monitorId: string, runId: string) => `/monitors/${monitorId}/runs/${runId}/image`;
export const runDiffPath = (monitorId: string, runId: string) => `/monitors/${monitorId}/runs/${runId}/diff`;

/** A run as the contract shows it. */
export function runView(run: MonitorRunRecord, monitor: Pick<MonitorRecord, 'baseUrl' | 'goldenRunId'>): MonitorRun {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    runId: run.id,
    monitorId: run.monitorId,
    status: run.status,
    startedAt: new Date(run.startedAt).toISOString(),
    finishedAt: iso(run.finishedAt),
    requestId: run.requestId,
    credits: run.credits,
    targetStatus: run.targetStatus,
    loadMs: run.loadMs,
    error: run.error,
    imageUrl: run.imageKey ? `${monitor.baseUrl}${runImagePath(run.monitorId, run.id)}` : null,
    golden: monitor.goldenRunId === run.id,
    baselineRunId: run.baselineRunId,
    diff: run.diff
      ? { ...run.diff, diffImageUrl: run.diffImageKey ? `${monitor.baseUrl}${runDiffPath(run.monitorId, run.id)}` : null }
      : null,
  };
}

/** A monitor as the contract shows it, with its last run. */
export function monitorView(monitor: MonitorRecord, lastRun: MonitorRunRecord | undefined): Monitor {
  return {
    monitorId: monitor.id,
    name: monitor.name,
    url: monitor.url,
    intervalSeconds: monitor.intervalSeconds,
    threshold: monitor.threshold,
    webhookUrl: monitor.webhookUrl,
    ignoreSelectors: monitor.ignoreSelectors,
    options: monitor.options,
    paused: monitor.paused,
    pausedReason: monitor.pausedReason,
    goldenRunId: monitor.goldenRunId,
    lastRun: lastRun ? runView(lastRun, monitor) : null,
    nextRunAt: monitor.paused || monitor.nextRunAt === null ? null : new Date(monitor.nextRunAt).toISOString(),
    createdAt: new Date(monitor.createdAt).toISOString(),
  };
}

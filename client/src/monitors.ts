import type { CreateMonitorInput, Monitor, MonitorRun, UpdateMonitorBodySchema } from '@daguerre/contract';
import type { z } from 'zod';

/** The body of `updateMonitor()`: any field of a monitor; `null` clears webhookUrl, ignoreSelectors or a capture option. */
export type UpdateMonitorInput = z.input<typeof UpdateMonitorBodySchema>;

/** A page of `listRuns()`: newest first; pass `nextCursor` as `cursor` for older runs. */
export interface MonitorRunPage {
  runs: MonitorRun[];
  nextCursor: string | null;
}

export interface ListRunsOptions {
  /** Runs per page, 1–100; default 20. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/** What the client's monitor methods need of it: one JSON request (retries and errors as every other method has them). */
export type JsonRequest = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<unknown>;

export interface MonitorMethods {
  /** Watches a page (`POST /monitors`): captured every `intervalSeconds`, each run compared with its baseline. The first run starts at once. */
  createMonitor(body: CreateMonitorInput): Promise<Monitor>;
  /** The organization's monitors, each with its last run. */
  listMonitors(): Promise<Monitor[]>;
  /** A monitor, its settings, its last run and when it runs next. */
  getMonitor(monitorId: string): Promise<Monitor>;
  /** Changes the fields given (`PATCH /monitors/{id}`); `null` clears webhookUrl, ignoreSelectors or a capture option. */
  updateMonitor(monitorId: string, patch: UpdateMonitorInput): Promise<Monitor>;
  /** Stops its runs until `resumeMonitor()` (`paused: true`). */
  pauseMonitor(monitorId: string): Promise<Monitor>;
  /** Runs it again on its schedule (`paused: false`). */
  resumeMonitor(monitorId: string): Promise<Monitor>;
  /** Stops and deletes a monitor, its runs and their images. */
  deleteMonitor(monitorId: string): Promise<void>;
  /** One page of a monitor's runs, newest first: status, credits, the capture and its diff against the baseline. */
  listRuns(monitorId: string, page?: ListRunsOptions): Promise<MonitorRunPage>;
  /** Pins a succeeded run as the golden baseline: later runs are compared with it until another is pinned. */
  pinRun(monitorId: string, runId: string): Promise<MonitorRun>;
}

const monitorPath = (monitorId: string) => `/monitors/${encodeURIComponent(monitorId)}`;

/** The monitor methods of `createClient()`, over its JSON request. */
export function monitorMethods(request: JsonRequest): MonitorMethods {
  const dataOf = async <T>(answer: Promise<unknown>) => ((await answer) as { data: T }).data;
  const update = (monitorId: string, patch: UpdateMonitorInput) => dataOf<Monitor>(request('PATCH', monitorPath(monitorId), patch));
  return {
    createMonitor: (body) => dataOf<Monitor>(request('POST', '/monitors', body)),
    listMonitors: async () => (await dataOf<{ monitors: Monitor[] }>(request('GET', '/monitors'))).monitors,
    getMonitor: (monitorId) => dataOf<Monitor>(request('GET', monitorPath(monitorId))),
    updateMonitor: update,
    pauseMonitor: (monitorId) => update(monitorId, { paused: true }),
    resumeMonitor: (monitorId) => update(monitorId, { paused: false }),
    async deleteMonitor(monitorId) {
      await request('DELETE', monitorPath(monitorId));
    },
    listRuns(monitorId, page = {}) {
      const query = new URLSearchParams();
      if (page.limit !== undefined) query.set('limit', String(page.limit));
      if (page.cursor !== undefined) query.set('cursor', page.cursor);
      const search = query.size > 0 ? `?${query.toString()}` : '';
      return dataOf<MonitorRunPage>(request('GET', `${monitorPath(monitorId)}/runs${search}`));
    },
    pinRun: (monitorId, runId) => dataOf<MonitorRun>(request('POST', `${monitorPath(monitorId)}/runs/${encodeURIComponent(runId)}/golden`)),
  };
}

import { contract, type CreateMonitorInput, type Monitor, type MonitorRun, type UpdateMonitorBodySchema } from '@daguerre/contract';
import type { AppRoute } from '@ts-rest/core';
import type { z } from 'zod';
import type { RouteRequest, SuccessBody } from './route-request.js';

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

/** What the client's monitor methods need of it: one request of a route (retries and errors as every other method has them). */
export interface MonitorTransport {
  /** A request whose 2xx answer is JSON, typed by the route's success response. */
  json<TRoute extends AppRoute>(route: TRoute, request: RouteRequest<TRoute>): Promise<SuccessBody<TRoute>>;
  /** A request whose 2xx answer has no body (204). */
  noContent<TRoute extends AppRoute>(route: TRoute, request: RouteRequest<TRoute>): Promise<void>;
}

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

/** The monitor methods of `createClient()`, over its requests. */
export function monitorMethods(transport: MonitorTransport): MonitorMethods {
  const update = async (monitorId: string, patch: UpdateMonitorInput) =>
    (await transport.json(contract.updateMonitor, { params: { monitorId }, body: JSON.stringify(patch) })).data;
  return {
    createMonitor: async (body) => (await transport.json(contract.createMonitor, { body: JSON.stringify(body) })).data,
    listMonitors: async () => (await transport.json(contract.listMonitors, {})).data.monitors,
    getMonitor: async (monitorId) => (await transport.json(contract.getMonitor, { params: { monitorId } })).data,
    updateMonitor: update,
    pauseMonitor: (monitorId) => update(monitorId, { paused: true }),
    resumeMonitor: (monitorId) => update(monitorId, { paused: false }),
    deleteMonitor: (monitorId) => transport.noContent(contract.deleteMonitor, { params: { monitorId } }),
    async listRuns(monitorId, page = {}) {
      const query = new URLSearchParams();
      if (page.limit !== undefined) query.set('limit', String(page.limit));
      if (page.cursor !== undefined) query.set('cursor', page.cursor);
      return (await transport.json(contract.listMonitorRuns, { params: { monitorId }, query })).data;
    },
    pinRun: async (monitorId, runId) => (await transport.json(contract.pinMonitorRun, { params: { monitorId, runId } })).data,
  };
}

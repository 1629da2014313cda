import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ErrorBodySchema } from './errors.js';
import type { RoutePolicy } from './route-policy.js';
import { DiffBodySchema, DiffResponseSchema } from './diff.js';
import { MonitorListSchema, MonitorResponseSchema, MonitorRunListSchema, MonitorRunResponseSchema } from './monitor-responses.js';
import { CreateMonitorBodySchema, MonitorRunsQuerySchema, UpdateMonitorBodySchema } from './monitors.js';

const c = initContract();

const authHeaders = z.object({
  'x-api-key': z.string().optional().describe('API key (alternative to the apiKey query parameter)'),
});
const monitorParam = z.object({ monitorId: z.string().describe('The monitorId answered by POST /monitors') });
const runParam = monitorParam.extend({ runId: z.string().describe('The runId of GET /monitors/{monitorId}/runs') });
const errors = { 400: ErrorBodySchema, 401: ErrorBodySchema, 404: ErrorBodySchema, 500: ErrorBodySchema, 503: ErrorBodySchema };
const image = c.otherResponse({ contentType: 'image/png', body: c.type<Blob>() });

/** Monitors and one-off diffs (docs/monitors.md). Any key of the organization manages its monitors. */
export const monitorsContract = c.router({
  createMonitor: {
    method: 'POST',
    path: '/monitors',
    // A monitor's runs are captures: creating one counts against the capture rate limit like queuing a job.
    metadata: { auth: 'key', rateLimited: true } satisfies RoutePolicy,
    summary: 'Watch a page: capture it every intervalSeconds and compare each run with its baseline',
    description:
      'Body: url, intervalSeconds (at least MONITOR_MIN_INTERVAL_SECONDS), threshold (percent of pixels, default 1), webhookUrl, ignoreSelectors, name, paused, and the capture options that shape an image. The first run starts at once. Each run is charged as its capture; a failed run is not. Bad input is refused naming the field and nothing is created; a plan allows a number of monitors (403 past it). Needs REDIS_URL.',
    body: CreateMonitorBodySchema,
    headers: authHeaders,
    responses: { 201: MonitorResponseSchema, 402: ErrorBodySchema, 403: ErrorBodySchema, ...errors },
  },
  listMonitors: {
    method: 'GET',
    path: '/monitors',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: "The organization's monitors, each with its last run",
    description:
      'Every monitor of the organization, newest first, with its settings, whether and why it is paused, its next run and its last run. Any key of the organization reads them. Costs nothing.',
    headers: authHeaders,
    query: z.object({ apiKey: z.string().optional().describe('API key; may instead be sent in header X-API-Key.') }).strict(),
    responses: { 200: MonitorListSchema, ...errors },
  },
  getMonitor: {
    method: 'GET',
    path: '/monitors/:monitorId',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'A monitor, its settings and its last run',
    description: '404 NOT_FOUND for an unknown id or a monitor of another organization. Costs nothing.',
    pathParams: monitorParam,
    headers: authHeaders,
    responses: { 200: MonitorResponseSchema, ...errors },
  },
  updateMonitor: {
    method: 'PATCH',
    path: '/monitors/:monitorId',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'Change a monitor: pause or resume it (paused), its schedule, threshold, webhook or capture options',
    description:
      'Only the fields given change; null clears webhookUrl, ignoreSelectors or a capture option. A new intervalSeconds takes effect from the next run.',
    pathParams: monitorParam,
    body: UpdateMonitorBodySchema,
    headers: authHeaders,
    responses: { 200: MonitorResponseSchema, ...errors },
  },
  deleteMonitor: {
    method: 'DELETE',
    path: '/monitors/:monitorId',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'Stop and delete a monitor, its runs and their images',
    description:
      'Its schedule is removed at once; a run already under way ends without an alert. Credits already charged stay charged. 204 with no body.',
    pathParams: monitorParam,
    body: c.noBody(),
    headers: authHeaders,
    responses: { 204: c.noBody(), ...errors },
  },
  listMonitorRuns: {
    method: 'GET',
    path: '/monitors/:monitorId/runs',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: "A monitor's runs, newest first: status, credits, the capture and its diff against the baseline",
    description:
      'Each run with its capture (imageUrl), its comparison with the baseline (diffPercent, regions, text added and removed, diffImageUrl) and what it cost. Read a page at a time with limit and cursor. The last MONITOR_RUNS_KEPT runs are kept, and the golden one.',
    pathParams: monitorParam,
    query: MonitorRunsQuerySchema,
    headers: authHeaders,
    responses: { 200: MonitorRunListSchema, ...errors },
  },
  pinMonitorRun: {
    method: 'POST',
    path: '/monitors/:monitorId/runs/:runId/golden',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'Pin a succeeded run as the golden baseline: later runs are compared with it until another is pinned',
    description:
      '409 when the run did not succeed (it has no image to compare with). Pin another run to move the baseline; pinning is kept across restarts.',
    pathParams: runParam,
    body: c.noBody(),
    headers: authHeaders,
    responses: { 200: MonitorRunResponseSchema, 409: ErrorBodySchema, ...errors },
  },
  getMonitorRunImage: {
    method: 'GET',
    path: '/monitors/:monitorId/runs/:runId/image',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: "The run's capture (PNG)",
    description: 'The PNG the run captured, with the same key as the API. 404 once the run is no longer kept.',
    pathParams: runParam,
    headers: authHeaders,
    responses: { 200: image, ...errors },
  },
  getMonitorRunDiffImage: {
    method: 'GET',
    path: '/monitors/:monitorId/runs/:runId/diff',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: "The changed pixels highlighted over the run's capture (PNG); 404 when nothing changed",
    description:
      "The changed pixels highlighted over a dimmed copy of the run's capture; 404 NOT_FOUND when the run changed nothing or has no baseline.",
    pathParams: runParam,
    headers: authHeaders,
    responses: { 200: image, ...errors },
  },
  diff: {
    method: 'POST',
    path: '/diff',
    // A diff captures pages: it counts against the capture rate limit like POST /captures.
    metadata: { auth: 'key', rateLimited: true, logRefusalsAs: 'sync' } satisfies RoutePolicy,
    summary: 'Compare two captures once: in pixels (percent, regions, a diff image) and in words (lines added and removed)',
    description:
      'before and after are each {url} (captured now, charged as a capture), {runId} (a monitor run) or {jobId} (a succeeded png async capture). Synchronous. Takes threshold, ignoreSelectors and the capture options of monitors for the sides it captures. Counts against the rate limit as one request.',
    body: DiffBodySchema,
    headers: authHeaders,
    responses: {
      200: DiffResponseSchema,
      402: ErrorBodySchema,
      403: ErrorBodySchema,
      422: ErrorBodySchema,
      429: ErrorBodySchema,
      502: ErrorBodySchema,
      504: ErrorBodySchema,
      ...errors,
    },
  },
  getDiffImage: {
    method: 'GET',
    path: '/diffs/:diffId/:image',
    metadata: { auth: 'key', rateLimited: false } satisfies RoutePolicy,
    summary: 'An image of a POST /diff: before, after or diff (the changed pixels highlighted over the newer capture), PNG',
    description:
      'The imageUrl and diffImageUrl links of POST /diff. Kept for JOB_RESULT_TTL_SECONDS (a day by default), for the organization that made the diff. 404 NOT_FOUND past that, for another organization, and for the diff image of a diff where nothing changed.',
    pathParams: z.object({
      diffId: z.string().describe('The id in the links of POST /diff'),
      image: z.string().describe('before, after or diff'),
    }),
    headers: authHeaders,
    responses: { 200: image, ...errors },
  },
});

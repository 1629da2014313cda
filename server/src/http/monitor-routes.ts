import { baseUrlOf } from './job-routes.js';
import type { CreateMonitorBody, UpdateMonitorBody } from '@daguerre/contract';
import type { Request, Response } from 'express';
import { ApiError } from '../errors.js';
import { keyOrganization } from '../services/usage-service.js';
import type { MonitorService } from '../monitors/monitor-service.js';
import type { AuthenticatedKey } from '../services/api-keys.js';
import { contextOf } from './request-context.js';

export interface MonitorRouteDependencies {
  /** Undefined without REDIS_URL: monitors then answer 503. */
  monitors: MonitorService | undefined;
}

function requireMonitors(monitors: MonitorService | undefined): MonitorService {
  if (!monitors) {
    // A configuration, not a passing fault: a retry is pointless before the operator acts, hence a long Retry-After.
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      'Monitors need a Redis server: this server runs without REDIS_URL. Ask the operator to set REDIS_URL.',
      { retryAfterSeconds: 300 },
    );
  }
  return monitors;
}

function keyOf(res: Response): AuthenticatedKey & { organizationId: string } {
  const auth = contextOf(res).auth!;
  keyOrganization(auth);
  return auth as AuthenticatedKey & { organizationId: string };
}

const ok = <T>(data: T) => ({ success: true as const, data });

/** The routes of /monitors (contract/src/monitor-routes.ts): contract → MonitorService → `{ status, body }`. */
export function monitorHandlers(deps: MonitorRouteDependencies) {
  const image = async (res: Response, monitorId: string, runId: string, which: 'image' | 'diff') => {
    const key = keyOf(res);
    const file = await requireMonitors(deps.monitors).image(key.organizationId, monitorId, runId, which);
    res.setHeader('Content-Type', 'image/png');
    res.setHeader('Content-Length', String(file.size));
    res.setHeader('Content-Disposition', `inline; filename="${which === 'image' ? 'run' : 'diff'}-${runId}.png"`);
    // Streamed from the result store, never held whole in memory.
    return { status: 200 as const, body: file.stream as unknown as Blob };
  };
  return {
    async create({ body, req, res }: { body: CreateMonitorBody; req: Request; res: Response }) {
      const monitors = requireMonitors(deps.monitors);
      const monitor = await monitors.create(keyOf(res), body, baseUrlOf(req));
      res.setHeader('Location', `/monitors/${monitor.monitorId}`);
      return { status: 201 as const, body: ok(monitor) };
    },
    async list({ res }: { res: Response }) {
      const monitors = requireMonitors(deps.monitors);
      return { status: 200 as const, body: ok({ monitors: await monitors.list(keyOf(res).organizationId) }) };
    },
    async get({ monitorId, res }: { monitorId: string; res: Response }) {
      const monitors = requireMonitors(deps.monitors);
      return { status: 200 as const, body: ok(await monitors.get(keyOf(res).organizationId, monitorId)) };
    },
    async update({ monitorId, body, res }: { monitorId: string; body: UpdateMonitorBody; res: Response }) {
      const monitors = requireMonitors(deps.monitors);
      return { status: 200 as const, body: ok(await monitors.update(keyOf(res), monitorId, body)) };
    },
    async remove({ monitorId, res }: { monitorId: string; res: Response }) {
      const monitors = requireMonitors(deps.monitors);
      await monitors.remove(keyOf(res).organizationId, monitorId);
      return { status: 204 as const, body: undefined };
    },
    async runs({ monitorId, query, res }: { monitorId: string; query: { limit: number; cursor?: string | undefined }; res: Response }) {
      const monitors = requireMonitors(deps.monitors);
      const page = await monitors.runs(keyOf(res).organizationId, monitorId, {
        limit: query.limit,
        ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
      });
      return { status: 200 as const, body: ok(page) };
    },
    async pin({ monitorId, runId, res }: { monitorId: string; runId: string; res: Response }) {
      const monitors = requireMonitors(deps.monitors);
      return { status: 200 as const, body: ok(await monitors.pin(keyOf(res).organizationId, monitorId, runId)) };
    },
    image: ({ monitorId, runId, res }: { monitorId: string; runId: string; res: Response }) => image(res, monitorId, runId, 'image'),
    diffImage: ({ monitorId, runId, res }: { monitorId: string; runId: string; res: Response }) => image(res, monitorId, runId, 'diff'),
  };
}

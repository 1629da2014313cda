import type { MonitorRun } from '@daguerre/contract';
import type { Response } from 'express';
import { ApiError } from '../errors.js';
import type { AuthenticatedKey } from '../services/api-keys.js';
import { runView } from '../monitors/monitor-view.js';
import type { ApiKeyRow } from '../store/api-key-repository.js';
import { MonitorRepository, type MonitorRecord } from '../store/monitor-repository.js';
import { MonitorRunRepository } from '../store/monitor-run-repository.js';
import type { DashboardServices } from './context.js';
import { dashboardContext, organizationOf } from './session.js';
import { messageReplies } from './message-replies.js';
import { keyStatus } from './views/keys-page.js';
import { monitorsHref } from './views/monitor-views.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type MonitorRouteSupport = ReturnType<typeof monitorRouteSupport>;

/**
 * What every monitor page of the dashboard needs: the service (absent without REDIS_URL), the
 * organization's own monitor and run, its active keys, the caller the service sees, and the
 * message pages (404, 503) they answer with.
 */
export function monitorRouteSupport(services: DashboardServices) {
  const { data, assets } = services;
  const monitors = services.jobs.monitors?.service;
  // Read beside the service: the key a monitor belongs to, and one run by its id.
  const records = new MonitorRepository(data.db);
  const runRecords = new MonitorRunRepository(data.db);

  /** The monitor's record, only when it is the organization's (the service's own check, for what it does not show). */
  const ownRecord = async (organizationId: string, monitorId: string): Promise<MonitorRecord> => {
    const record = UUID.test(monitorId) ? await records.get(monitorId) : undefined;
    if (!record || record.organizationId !== organizationId)
      throw new ApiError('NOT_FOUND', `No monitor ${monitorId} in this organization`);
    return record;
  };
  const ownRun = async (record: MonitorRecord, runId: string): Promise<MonitorRun> => {
    const run = UUID.test(runId) ? await runRecords.get(runId) : undefined;
    if (!run || run.monitorId !== record.id) throw new ApiError('NOT_FOUND', `No run ${runId} of monitor ${record.id}`);
    return runView(run, record);
  };

  const message = messageReplies(assets, { href: monitorsHref, label: 'Back to monitors' });
  const notFound = (res: Response) =>
    message(res, 404, 'Monitor not found', 'There is no monitor or run with this id in your organization.');
  const unavailable = (res: Response) =>
    message(
      res,
      503,
      'Monitors are not available',
      'This server runs without REDIS_URL, so monitors cannot run here. Ask the operator to set REDIS_URL.',
    );

  /** Runs `work` with the service; its 404 (another organization's monitor, an unknown run) is the page's 404. */
  const withService = async (res: Response, work: (service: NonNullable<typeof monitors>) => Promise<void>): Promise<void> => {
    if (!monitors) return unavailable(res);
    try {
      await work(monitors);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return notFound(res);
      throw error;
    }
  };

  const activeKeys = async (organizationId: string): Promise<ApiKeyRow[]> => {
    const now = services.now();
    return (await data.apiKeys.list(organizationId)).filter((key) => keyStatus(key, now) === 'active');
  };

  /** The caller the service sees: the member, acting with a key of the organization (the one that signs the webhooks). */
  const callerOf = (res: Response, keyId: string): AuthenticatedKey => ({
    keyId,
    organizationId: organizationOf(res).organizationId,
    userId: dashboardContext(res).session.userId,
    membershipActive: true,
  });

  return { monitors, ownRecord, ownRun, message, unavailable, withService, activeKeys, callerOf };
}

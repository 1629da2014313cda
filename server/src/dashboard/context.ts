import type { Response } from 'express';
import type { Logger } from 'pino';
import type { JobsRuntime } from '../jobs/start-jobs.js';
import type { MonitorsRuntime } from '../monitors/start-monitors.js';
import type { DataLayer } from '../services/data-layer.js';
import type { SessionRepository } from '../store/session-repository.js';
import type { SafeHtml } from './html.js';
import type { Assets } from './views/layout.js';

/** What the dashboard uses of the data layer: no browser, so it can also run beside a plain app in tests. */
export type DashboardData = Pick<DataLayer, 'db' | 'accounts' | 'credits' | 'apiKeys' | 'usage' | 'storageConfigs' | 'storage'>;

/** What the dashboard uses of async jobs to act on them (file, cancel, send again) and of monitors; each is undefined without REDIS_URL. */
export type DashboardJobs = Pick<JobsRuntime, 'jobs' | 'batches' | 'withdrawal' | 'webhooks'> & { monitors?: MonitorsRuntime };

/** Shared by the dashboard's route modules. */
export interface DashboardServices {
  data: DashboardData;
  sessions: SessionRepository;
  logger: Logger;
  assets: Assets;
  /** Whether STORAGE_ENCRYPTION_KEY is set (storage configurations can be saved). */
  encryptionConfigured: boolean;
  jobs: DashboardJobs;
  /** REQUEST_LOG_RETENTION_DAYS, said on the request log's page. */
  requestLogRetentionDays: number;
  /** MONITOR_MIN_INTERVAL_SECONDS, said by the monitor form. */
  monitorMinIntervalSeconds: number;
  now(): number;
}

/** Sends a full page; dashboard pages are never cached (they show keys and may show a new key's value). */
export function sendPage(res: Response, markup: SafeHtml, status = 200): void {
  res.status(status).type('html').send(markup.value);
}

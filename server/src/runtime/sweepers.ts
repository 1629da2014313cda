import type { Logger } from 'pino';
import { maxCaptureBudgetMs } from '@daguerre/contract';
import type { Config } from '../config.js';
import { CreditSweeper } from '../services/credit-sweeper.js';
import { RequestLog } from '../services/request-log.js';
import type { DataLayer } from '../services/data-layer.js';
import { RequestLogRepository } from '../store/request-log-repository.js';

/** Starts the data layer's background sweeps: stale credit reservations and the request log's retention. */
export async function startSweepers(
  config: Config,
  data: DataLayer,
  logger: Logger,
): Promise<{ sweeper: CreditSweeper; requestLog: RequestLog }> {
  // A reservation older than the deadline plus a margin (for the upload and the commit) belongs to
  // no live capture on any instance: each instance sweeps them at start-up and then on a timer.
  const sweeper = new CreditSweeper(data.credits, {
    marginMs: config.STALE_RESERVATION_MARGIN_MS,
    staleAfterMs: maxCaptureBudgetMs(config.CAPTURE_TIMEOUT_MS) + config.STALE_RESERVATION_MARGIN_MS,
    intervalMs: config.CREDIT_SWEEP_INTERVAL_MS,
    logger,
  });
  await sweeper.sweep();
  sweeper.start();
  const requestLog = new RequestLog(new RequestLogRepository(data.db), {
    retentionDays: config.REQUEST_LOG_RETENTION_DAYS,
    refusalsPerMinute: config.REQUEST_LOG_REFUSALS_PER_MINUTE,
    sweepIntervalMs: config.REQUEST_LOG_SWEEP_INTERVAL_MS,
    logger,
  });
  requestLog.start();
  return { sweeper, requestLog };
}

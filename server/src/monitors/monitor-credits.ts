import type { Logger } from 'pino';
import type { CreditRepository } from '../store/credit-repository.js';
import type { MonitorRepository } from '../store/monitor-repository.js';
import type { MonitorAlerts } from './monitor-alerts.js';
import type { MonitorSchedule } from './monitor-schedule.js';

/**
 * An organization out of credits has its monitors paused (paused_reason `credits`, a
 * monitor.paused webhook each), and resumed (monitor.resumed) once its balance covers a capture
 * again: a new period, a grant. The check runs with the schedule's reconcile, on every process;
 * the database's conditional updates make sure each monitor is paused and resumed, and told, once.
 */
export class MonitorCredits {
  constructor(
    private readonly deps: {
      monitors: MonitorRepository;
      credits: CreditRepository;
      schedule: MonitorSchedule;
      alerts: MonitorAlerts;
      logger: Logger;
    },
    private readonly options: { creditsPerCapture: number },
  ) {}

  async ranOut(organizationId: string): Promise<void> {
    const paused = await this.deps.monitors.pauseForCredits(organizationId);
    for (const monitor of paused) {
      await this.deps.schedule
        .unplan(monitor.id)
        .catch((error: unknown) =>
          this.deps.logger.warn(
            { monitorId: monitor.id, err: error },
            'could not remove the schedule of a monitor paused for credits; the reconcile will',
          ),
        );
      await this.deps.alerts.paused(
        monitor,
        'credits: the organization has no credits left for a capture; the monitor resumes when credits return',
      );
    }
    if (paused.length > 0)
      this.deps.logger.info({ organizationId, monitors: paused.length }, 'monitors paused: the organization ran out of credits');
  }

  async resumeWhereCreditsReturned(): Promise<void> {
    const organizations = await this.deps.monitors.organizationsPausedForCredits();
    for (const organizationId of organizations) {
      // rollOverIfDue opens a new period when the old one ended: that is when credits usually return.
      const balance = await this.deps.credits.rollOverIfDue(organizationId);
      if (!balance || balance.remaining < this.options.creditsPerCapture) continue;
      const resumed = await this.deps.monitors.resumeFromCredits(organizationId);
      for (const monitor of resumed) {
        await this.deps.schedule
          .plan(monitor)
          .catch((error: unknown) =>
            this.deps.logger.warn({ monitorId: monitor.id, err: error }, 'could not schedule a resumed monitor; the reconcile will'),
          );
        await this.deps.alerts.resumed(monitor, 'credits: the organization has credits again');
      }
      if (resumed.length > 0) this.deps.logger.info({ organizationId, monitors: resumed.length }, 'monitors resumed: credits returned');
    }
  }
}

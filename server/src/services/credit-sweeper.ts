import type { Logger } from 'pino';
import type { CreditRepository } from '../store/credit-repository.js';

export interface CreditSweeperOptions {
  /** A reservation whose capture deadline ended longer ago than this belongs to no live capture. */
  marginMs: number;
  /** For rows written before deadlines were recorded: older than this (the longest deadline plus the margin). */
  staleAfterMs: number;
  /** How often this instance sweeps. */
  intervalMs: number;
  logger: Logger;
}

/**
 * Gives back credits stranded by a crash (of this or another instance) or by a release that failed
 * during a database outage, while the service runs: every instance sweeps on its own timer, and the
 * repository's conditional UPDATE makes concurrent sweeps settle each row once.
 */
export class CreditSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly credits: CreditRepository,
    private readonly options: CreditSweeperOptions,
  ) {}

  /** One sweep; errors are logged (the rows stay reserved and the next sweep retries them). */
  sweep(): Promise<void> {
    this.running ??= this.credits
      .releaseStaleReservations({ marginMs: this.options.marginMs, olderThanMs: this.options.staleAfterMs })
      .then(
        (released) => {
          if (released > 0) this.options.logger.warn({ released }, 'released stale credit reservations (a crash or a failed release)');
        },
        (error: unknown) => this.options.logger.warn({ err: error }, 'stale-reservation sweep failed; retrying at the next interval'),
      )
      .finally(() => (this.running = undefined));
    return this.running;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.sweep(), this.options.intervalMs);
    // The sweeper never keeps the process alive by itself.
    this.timer.unref();
  }

  /** Stops the timer and waits for a sweep under way, so the database can close after it. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}

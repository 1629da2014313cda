import type { Logger } from 'pino';
import type { Slot } from './pool-slot.js';

/**
 * Fresh browser contexts opened in advance, which have served no organization yet: an
 * organization without a warm context of its own takes one (context-pool.ts), so that its capture
 * does not pay for opening a context (SPARE_CONTEXTS).
 */
export class SpareContexts {
  /** The spares ready now (the pool drops stale ones and closes them all at the end). */
  readonly ready: Slot[] = [];
  private opening = 0;
  /** The spares being opened now: a capture with no spare ready waits for one rather than open another. */
  private refilling: Promise<void> = Promise.resolve();
  /** Captures waiting for the next spare to be ready (or to fail): each opening that ends wakes them. */
  private waiting: (() => void)[] = [];

  constructor(
    private readonly open: () => Promise<Slot>,
    private readonly discard: (slot: Slot) => Promise<void>,
    private readonly closed: () => boolean,
    private readonly logger: Logger,
  ) {}

  /** Opens fresh contexts up to `target`; failures only leave fewer spares. */
  refill(target: number): Promise<void> {
    const wanted = target - this.ready.length - this.opening;
    const opening: Promise<void>[] = [];
    for (let i = 0; i < wanted && !this.closed(); i++) {
      this.opening += 1;
      opening.push(
        this.open()
          .then(async (spare) => {
            if (this.closed()) await this.discard(spare);
            else this.ready.push(spare);
          })
          .catch((error: unknown) => this.logger.warn({ err: error }, 'could not open a spare browser context'))
          .finally(() => {
            this.opening -= 1;
            for (const wake of this.waiting.splice(0)) wake();
          }),
      );
    }
    if (opening.length > 0) this.refilling = Promise.all([this.refilling, ...opening]).then(() => undefined);
    return this.refilling;
  }

  /** Closes the ready spares past `target` (those warm() opened for a first burst of captures). */
  trim(target: number): void {
    // discard is the pool's closeSlot, which never rejects.
    for (const spare of this.ready.splice(Math.max(0, target))) void this.discard(spare);
  }

  /**
   * The next ready spare; when none is ready but some are being opened, waits for the first of them,
   * not for all (a new process opens one a render slot while its first capture waits).
   */
  async take(): Promise<Slot | undefined> {
    while (this.ready.length === 0 && this.opening > 0) await new Promise<void>((wake) => this.waiting.push(wake));
    return this.ready.shift();
  }
}

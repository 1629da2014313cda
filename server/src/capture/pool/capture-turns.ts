/** MAX_QUEUE captures already wait for a context: the next one is refused rather than queued. */
export class PoolSaturatedError extends Error {}

interface Waiter {
  grant: () => void;
  cancel: (error: Error) => void;
}

/**
 * Whose turn it is to hold a context: at most `size` captures at once (MAX_CONCURRENCY), then a
 * queue of at most `maxQueue` (MAX_QUEUE) served in arrival order. A turn passes straight from a
 * capture that ends to the next waiter, so a newcomer never overtakes the queue.
 */
export class CaptureTurns {
  private holding = 0;
  private readonly waiters: Waiter[] = [];
  /** The waiter of each run still in the queue, so that leave() can take it out. */
  private readonly queued = new Map<Promise<unknown>, Waiter>();

  constructor(
    private readonly size: number,
    private readonly maxQueue: number,
    /** Called each time the last turn ends. */
    private readonly onIdle: () => void,
  ) {}

  /** Captures holding a turn now. */
  get busy(): number {
    return this.holding;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** Runs `work` in a turn of its own; a failed `work` gives its turn back. Rejects with PoolSaturatedError when the queue is full. */
  run<T>(work: () => Promise<T>): Promise<T> {
    let turn: Promise<void>;
    let waiter: Waiter | undefined;
    if (this.holding < this.size && this.waiters.length === 0) {
      this.holding += 1;
      turn = Promise.resolve();
    } else if (this.waiters.length >= this.maxQueue) {
      return Promise.reject(new PoolSaturatedError('capture queue is full'));
    } else {
      turn = new Promise<void>((grant, cancel) => {
        waiter = { grant, cancel };
        this.waiters.push(waiter);
      });
    }
    const running = turn.then(async () => {
      try {
        return await work();
      } catch (error) {
        this.end();
        throw error;
      }
    });
    if (waiter) {
      this.queued.set(running, waiter);
      // Both sides only forget the waiter: this never rejects.
      const forget = () => this.queued.delete(running);
      void running.then(forget, forget);
    }
    return running;
  }

  /** A run still waiting for its turn leaves the queue, rejected; one whose turn came is not affected. */
  leave(running: Promise<unknown>): void {
    const waiter = this.queued.get(running);
    const index = waiter ? this.waiters.indexOf(waiter) : -1;
    if (waiter && index >= 0) {
      this.waiters.splice(index, 1);
      waiter.cancel(new Error('the capture gave up its place in the queue'));
    }
  }

  /** Ends a turn: the next waiter, if any, inherits it. */
  end(): void {
    const next = this.waiters.shift();
    if (next) next.grant();
    else this.holding -= 1;
    if (this.holding === 0) this.onIdle();
  }
}

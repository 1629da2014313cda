/**
 * The contexts being reset (or having their parked page left) between two captures, by
 * organization: that organization's next capture waits for one of them rather than open a new
 * context, and the pool counts them among the organization's warm contexts (context-pool.ts).
 */
export class PendingResets {
  private readonly byKey = new Map<string, Set<Promise<void>>>();

  /**
   * Tracks `work` under `key` until it settles. `work` includes putting the context back among the
   * idle ones: a capture waiting for it wakes when `work` settles and looks there at once.
   */
  async track(key: string, work: Promise<void>): Promise<void> {
    const pending = this.byKey.get(key) ?? new Set();
    this.byKey.set(key, pending.add(work));
    try {
      await work;
    } finally {
      pending.delete(work);
      if (pending.size === 0) this.byKey.delete(key);
    }
  }

  /** Resets under way for `key`. */
  of(key: string): ReadonlySet<Promise<void>> | undefined {
    return this.byKey.get(key);
  }

  count(key?: string): number {
    if (key !== undefined) return this.byKey.get(key)?.size ?? 0;
    let total = 0;
    for (const pending of this.byKey.values()) total += pending.size;
    return total;
  }
}

/** The benchmark's progress log and the cleanups that run at its end or on SIGINT/SIGTERM. */
import { nowMs } from './stats.js';

const t0 = nowMs();
export function log(message: string): void {
  process.stderr.write(`[bench +${((nowMs() - t0) / 1000).toFixed(1)}s] ${message}\n`);
}

export const cleanups: (() => Promise<void>)[] = [];
export async function runCleanups(): Promise<void> {
  // Bounded: each cleanup is removed before it runs.
  while (cleanups.length > 0) {
    const fn = cleanups.pop();
    if (!fn) break;
    try {
      await fn();
    } catch (e) {
      log(`cleanup failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: cleaning up`);
    void runCleanups().finally(() => process.exit(130));
  });
}

import type { BatchData } from '@daguerre/contract';
import type { AsyncCaptureRequest, WaitOptions } from './async-captures.js';

/**
 * `captureBulk()`'s request: many async captures at once. Each item is what `captureAsync()` takes,
 * laid over `defaults`; `webhookUrl` is called once when the whole batch is done (an item's own
 * webhookUrl is called when that item ends).
 */
export interface BulkCaptureRequest {
  defaults?: Partial<AsyncCaptureRequest>;
  requests: Array<Partial<AsyncCaptureRequest>>;
  webhookUrl?: string;
}

const withoutUndefined = (object: object) => Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));

/** The JSON body of `POST /captures/bulk`. */
export function toBulkBody(request: BulkCaptureRequest): string {
  return JSON.stringify({
    ...(request.defaults ? { defaults: withoutUndefined(request.defaults) } : {}),
    requests: request.requests.map(withoutUndefined),
    ...(request.webhookUrl !== undefined ? { webhookUrl: request.webhookUrl } : {}),
  });
}

/** Polls until the batch is completed or cancelled, and returns its final state. */
export async function pollBatchUntilDone(
  getBatch: (batchId: string) => Promise<BatchData>,
  batchId: string,
  options: WaitOptions = {},
): Promise<BatchData> {
  const interval = options.intervalMs ?? 1_000;
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  for (;;) {
    const batch = await getBatch(batchId);
    if (batch.status === 'completed' || batch.status === 'cancelled') return batch;
    if (Date.now() + interval > deadline) {
      throw new Error(
        `Batch ${batchId} did not finish in time (status ${batch.status}, ${batch.counts.queued} queued, ${batch.counts.running} running)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

export type { BatchData };

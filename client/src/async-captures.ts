import type { AsyncCaptureAccepted, CaptureJobData } from '@daguerre/contract';
import type { CaptureRequest } from './capture-request.js';
import { toCaptureBody } from './capture-request.js';

/** Options of `captureAsync()`: those of `capture()` plus the webhook to call when the job ends. */
export type AsyncCaptureRequest = CaptureRequest & { webhookUrl?: string };

export interface WaitOptions {
  /** Between two polls; default 1000 ms. */
  intervalMs?: number;
  /** Gives up (throws) after this long; default 5 minutes. */
  timeoutMs?: number;
}

/** The JSON body and headers of `POST /captures` (the provider key travels as a header). */
export function toAsyncCaptureBody(request: AsyncCaptureRequest): { body: string; headers: Record<string, string> } {
  const { body, headers } = toCaptureBody(request, true);
  delete body.returnFile;
  return { body: JSON.stringify(body), headers: { ...headers, 'content-type': 'application/json' } };
}

/** Thrown by `waitForCapture` when the job has not ended within `timeoutMs`; the job goes on. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';

  constructor(
    readonly jobId: string,
    /** The job's last known status: queued or active. */
    readonly lastStatus: CaptureJobData['status'],
  ) {
    super(`Capture job ${jobId} did not finish in time (status ${lastStatus})`);
  }
}

/** Polls until the job has succeeded or failed, and returns its final state. */
export async function pollUntilDone(
  getCapture: (jobId: string) => Promise<CaptureJobData>,
  jobId: string,
  options: WaitOptions = {},
): Promise<CaptureJobData> {
  const interval = options.intervalMs ?? 1_000;
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  for (;;) {
    const job = await getCapture(jobId);
    if (job.status === 'succeeded' || job.status === 'failed') return job;
    if (Date.now() + interval > deadline) throw new WaitTimeoutError(jobId, job.status);
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

export type { AsyncCaptureAccepted, CaptureJobData };

/** The typed client's public shape: the options of `createClient()` and the methods it answers with. */
import type {
  CaptureLogPage,
  CaptureLogQuery,
  CaptureResult,
  DiffInput,
  DiffResponse,
  UsageReport,
  WebhookEventLog,
} from '@daguerre/contract';
import type { AsyncCaptureAccepted, AsyncCaptureRequest, CaptureJobData, WaitOptions } from './async-captures.js';
import type { BatchData, BulkCaptureRequest } from './bulk-captures.js';
import type { CaptureFile } from './capture-file.js';
import type { CaptureInput, CaptureRequest } from './capture-request.js';
import type { MonitorMethods } from './monitors.js';
import type { RawClient } from './raw-client.js';
import type { RetryOptions } from './retry.js';
import type { SignedUrlOptions } from './signed-url.js';

export interface ClientOptions {
  /** Service root, e.g. `https://capture.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** Sent as header `X-API-Key`, never in the query, so it stays out of URLs and logs. */
  apiKey: string;
  /** Replaces the global `fetch` (tests, proxies, instrumentation). */
  fetch?: typeof fetch;
  /** Without it, nothing is retried. */
  retry?: RetryOptions;
  /** The API key's id (`daguerre key create --json` → `id`); needed by `signedUrl()`. */
  keyId?: string;
  /** The key's signing secret (shown once at creation or rotation); needed by `signedUrl()`. Keep it server-side. */
  signingSecret?: string;
}

/** Filters of `listCaptures()`: every field optional, as in the query of GET /captures. */
export type CaptureLogFilters = Partial<Omit<CaptureLogQuery, 'apiKey'>>;

/** Monitors: `createMonitor`, `listMonitors`, `getMonitor`, `updateMonitor`, `pauseMonitor`, `resumeMonitor`, `deleteMonitor`, `listRuns`, `pinRun` (monitors.ts). */
export interface DaguerreClient extends MonitorMethods {
  raw: RawClient;
  /** Captures and returns the file. Throws DaguerreError on any non-2xx response. */
  capture(options: CaptureInput): Promise<CaptureFile>;
  /** Captures with `returnFile=false` and returns the JSON result (base64 `imageData`, storage `url`). */
  captureJson(options: CaptureInput): Promise<CaptureResult>;
  /** Credit balance and capture rate limit of the key's organization. */
  usage(): Promise<UsageReport>;
  /**
   * One page of the organization's request log (`GET /captures`), newest first; pass the answer's
   * `nextCursor` as `cursor` for older captures.
   */
  listCaptures(filters?: CaptureLogFilters): Promise<CaptureLogPage['data']>;
  /** Cancels an async job that has not ended (`DELETE /captures/{jobId}`): it fails with CANCELLED and is never charged. */
  cancelCapture(jobId: string): Promise<CaptureJobData>;
  /** The webhook events of a job or a batch, each with its delivery attempts (status, duration, next retry). */
  listWebhookEvents(of: { jobId: string } | { batchId: string }): Promise<WebhookEventLog[]>;
  /** Sends a webhook event again: the same event id and body, newly signed. */
  redeliverWebhookEvent(eventId: string): Promise<WebhookEventLog>;
  /**
   * A signed GET /capture link for these options, usable as a public `<img src>`: it carries no
   * key. Needs `keyId` and `signingSecret` in the client options. `expiresIn` is in seconds.
   */
  signedUrl(options: CaptureRequest, signing?: SignedUrlOptions): Promise<string>;
  /** Queues a capture (`POST /captures`); the server needs Redis. Resolves with the job id. */
  captureAsync(options: AsyncCaptureRequest): Promise<AsyncCaptureAccepted['data']>;
  /** The state of a queued capture: queued, active, succeeded (with `result`) or failed (with `error`). */
  getCapture(jobId: string): Promise<CaptureJobData>;
  /** Polls until the job has succeeded or failed; check `status` of the answer. */
  waitForCapture(jobId: string, options?: WaitOptions): Promise<CaptureJobData>;
  /** The file of a succeeded job. */
  getCaptureFile(jobId: string): Promise<CaptureFile>;
  /** Queues many captures at once (`POST /captures/bulk`): every item is validated first, each becomes a job of its own. */
  captureBulk(request: BulkCaptureRequest): Promise<BatchData>;
  /** A batch's status, counts and items (each with its jobId, status and links). */
  getBatch(batchId: string): Promise<BatchData>;
  /** Polls until the batch is completed or cancelled. */
  waitForBatch(batchId: string, options?: WaitOptions): Promise<BatchData>;
  /** Cancels the batch's items that have not ended (never charged). */
  cancelBatch(batchId: string): Promise<BatchData>;
  /**
   * Compares two captures once (`POST /diff`): `before` and `after` are each `{ url }` (captured
   * now, charged as a capture), `{ jobId }` or `{ runId }`. Resolves with the percent of changed
   * pixels, their regions, the lines of text added and removed, and links to the three images.
   */
  diff(body: DiffInput): Promise<DiffResponse['data']>;
}

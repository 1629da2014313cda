import { initClient, type ApiFetcher, type AppRoute, type InitClientReturn } from '@ts-rest/core';
import {
  contract,
  MIME_TYPES,
  type CaptureLogPage,
  type CaptureLogQuery,
  type CaptureResult,
  type Contract,
  type DiffInput,
  type DiffResponse,
  type UsageReport,
  type WebhookEventLog,
} from '@daguerre/contract';
import { toCaptureBody, toCaptureQuery, needsJsonBody, type CaptureInput, type CaptureRequest } from './capture-request.js';
import { parseContentDispositionFileName } from './content-disposition.js';
import {
  pollUntilDone,
  toAsyncCaptureBody,
  type AsyncCaptureAccepted,
  type AsyncCaptureRequest,
  type CaptureJobData,
  type WaitOptions,
} from './async-captures.js';
import { errorFromResponse, headersToRecord, parseJson, DaguerreError } from './daguerre-error.js';
import { signCaptureUrl, type SignedUrlOptions } from './signed-url.js';
import { pollBatchUntilDone, toBulkBody, type BatchData, type BulkCaptureRequest } from './bulk-captures.js';
import { DEFAULT_MAX_DELAY_MS, isRetryableStatus, retryDelayMs, sleep, type RetryOptions } from './retry.js';
import { monitorMethods, type MonitorMethods } from './monitors.js';
import { pathOf, type RouteRequest, type SuccessBody } from './route-request.js';

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

/** A captured file (`returnFile=true`). */
export interface CaptureFile {
  bytes: Uint8Array;
  /** e.g. `image/png`, `application/pdf`. */
  contentType: string;
  /** From `Content-Disposition`; `capture.<ext>` if the service sent none. */
  fileName: string;
  /** Response headers, lower-cased names: `x-ratelimit-*`, `x-service-ai-result`, … */
  headers: Record<string, string>;
  /** HTTP status the target's main document answered (`X-Target-Status`); null for html captures and job files. */
  targetStatus: number | null;
  /** The target's URL after redirects (`X-Final-Url`); null for html captures and job files. */
  finalUrl: string | null;
  /** True when the image was cut to the full-page budget (`X-Capture-Truncated`). */
  truncated: boolean;
  /** True when waitUntil was not reached in time and the page was captured as it was (`X-Capture-Wait-Timed-Out`). */
  waitTimedOut: boolean;
  /** True when fullPageScroll stopped while the page was still growing (`X-Capture-Still-Growing`). */
  stillGrowing: boolean;
  /** True when the page could not be read in time after its file: the file is whole, the page's reports are not (`X-Capture-Inspection-Timed-Out`). */
  inspectionTimedOut: boolean;
}

interface RawClientArgs {
  baseUrl: string;
  baseHeaders: { 'x-api-key': string };
  api?: ApiFetcher;
}

/** The ts-rest client of the contract: routes `capture`, `captureWithBody`, `usage`. */
export type RawClient = InitClientReturn<Contract, RawClientArgs>;

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

const EXTENSION_BY_MIME = new Map(Object.entries(MIME_TYPES).map(([format, mime]) => [mime, format]));

/**
 * The same fetch-and-decode steps as ts-rest's default fetcher, over a caller-supplied fetch, so
 * `raw` honours `ClientOptions.fetch` too.
 */
function tsRestFetcher(fetchImpl: typeof fetch): ApiFetcher {
  return async ({ path, method, headers, body, fetchOptions }) => {
    const response = await fetchImpl(path, { ...fetchOptions, method, headers, body });
    const contentType = response.headers.get('content-type') ?? '';
    const decoded = contentType.includes('json')
      ? await response.json()
      : contentType.startsWith('text/')
        ? await response.text()
        : await response.blob();
    return { status: response.status, body: decoded, headers: response.headers };
  };
}

export function createClient(options: ClientOptions): DaguerreClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const maxDelayMs = options.retry?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  // Looked up on every call, not captured once, so a global fetch replaced later (mocks) is used.
  const fetchImpl: typeof fetch = (input, init) => (options.fetch ?? globalThis.fetch)(input, init);

  const rawArgs: RawClientArgs = { baseUrl, baseHeaders: { 'x-api-key': options.apiKey } };
  if (options.fetch) rawArgs.api = tsRestFetcher(fetchImpl);
  const raw: RawClient = initClient(contract, rawArgs);

  /** Sends one request of a contract route, retrying 429/503 when `retry` is set; resolves only with a 2xx response. */
  async function send<TRoute extends AppRoute>(route: TRoute, request: RouteRequest<TRoute>): Promise<Response> {
    const headers = { ...request.headers, 'x-api-key': options.apiKey };
    const url = `${baseUrl}${pathOf(route, request)}`;
    for (let attempt = 0; ; attempt++) {
      const response = await fetchImpl(url, { method: route.method, headers, body: request.body });
      if (response.ok) return response;
      const error = await errorFromResponse(response);
      const mayRetry = options.retry !== undefined && attempt < options.retry.maxRetries && isRetryableStatus(response.status);
      if (!mayRetry) throw error;
      await sleep(retryDelayMs(error.retryAfterSeconds, attempt, maxDelayMs));
    }
  }

  function sendCapture(request: CaptureRequest, returnFile: boolean): Promise<Response> {
    if (needsJsonBody(request)) {
      const { body, headers } = toCaptureBody(request, returnFile);
      return send(contract.captureWithBody, { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    }
    const { query, headers } = toCaptureQuery(request, returnFile);
    return send(contract.capture, { query, headers });
  }

  /**
   * The JSON body of a route's 2xx answer, typed by the contract (not re-validated: see SuccessBody).
   * A 2xx whose body is not JSON is a broken deployment (proxy page), reported like a server error.
   */
  async function readJson<TRoute extends AppRoute>(_route: TRoute, response: Response): Promise<SuccessBody<TRoute>> {
    const text = await response.text();
    const body = parseJson(text);
    if (body === undefined) {
      throw new DaguerreError({
        status: response.status,
        code: 'INTERNAL_ERROR',
        message: `Expected a JSON body from ${response.url || 'the service'}, got ${response.headers.get('content-type') ?? 'no content type'}`,
        headers: headersToRecord(response.headers),
      });
    }
    return body as SuccessBody<TRoute>;
  }

  /** A 2xx JSON answer of a route, sent with `accept: application/json`. */
  async function callJson<TRoute extends AppRoute>(route: TRoute, request: RouteRequest<TRoute>): Promise<SuccessBody<TRoute>> {
    return readJson(route, await send(route, { ...request, headers: { accept: 'application/json', ...request.headers } }));
  }

  /** A binary answer (a capture, or a job's file) with its name and headers. */
  async function fileOf(response: Response): Promise<CaptureFile> {
    const contentType = response.headers.get('content-type') ?? 'application/octet-stream';
    const mime = contentType.split(';')[0]?.trim() ?? contentType;
    const fileName =
      parseContentDispositionFileName(response.headers.get('content-disposition')) ?? `capture.${EXTENSION_BY_MIME.get(mime) ?? 'bin'}`;
    const status = response.headers.get('x-target-status');
    return {
      bytes: new Uint8Array(await response.arrayBuffer()),
      contentType,
      fileName,
      headers: headersToRecord(response.headers),
      targetStatus: status !== null && /^\d{3}$/.test(status) ? Number(status) : null,
      finalUrl: response.headers.get('x-final-url'),
      truncated: response.headers.get('x-capture-truncated') === 'true',
      waitTimedOut: response.headers.get('x-capture-wait-timed-out') === 'true',
      stillGrowing: response.headers.get('x-capture-still-growing') === 'true',
      inspectionTimedOut: response.headers.get('x-capture-inspection-timed-out') === 'true',
    };
  }

  async function getBatch(batchId: string): Promise<BatchData> {
    return (await callJson(contract.getCaptureBatch, { params: { batchId } })).data;
  }

  async function getCapture(jobId: string): Promise<CaptureJobData> {
    return (await callJson(contract.getCaptureJob, { params: { jobId } })).data;
  }

  return {
    raw,

    ...monitorMethods({
      json: (route, request) =>
        callJson(route, { ...request, headers: request.body === undefined ? {} : { 'content-type': 'application/json' } }),
      async noContent(route, request) {
        await send(route, { ...request, headers: { accept: 'application/json' } });
      },
    }),

    async capture(request) {
      return fileOf(await sendCapture(request, true));
    },

    async captureAsync(request) {
      const { body, headers } = toAsyncCaptureBody(request);
      return (await readJson(contract.createCaptureJob, await send(contract.createCaptureJob, { headers, body }))).data;
    },

    getCapture,

    waitForCapture(jobId, waitOptions) {
      return pollUntilDone(getCapture, jobId, waitOptions);
    },

    async getCaptureFile(jobId) {
      return fileOf(await send(contract.getCaptureJobFile, { params: { jobId } }));
    },

    async captureJson(request) {
      // The JSON form of the capture's answer (returnFile=false), one schema for GET and POST.
      return readJson(contract.capture, await sendCapture(request, false));
    },

    async captureBulk(request) {
      return (await callJson(contract.createCaptureBatch, { headers: { 'content-type': 'application/json' }, body: toBulkBody(request) }))
        .data;
    },

    getBatch,

    waitForBatch(batchId, waitOptions) {
      return pollBatchUntilDone(getBatch, batchId, waitOptions);
    },

    async diff(body) {
      return (await callJson(contract.diff, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).data;
    },

    async cancelBatch(batchId) {
      return (await callJson(contract.cancelCaptureBatch, { params: { batchId } })).data;
    },

    async usage() {
      return callJson(contract.usage, {});
    },

    async cancelCapture(jobId) {
      return (await callJson(contract.cancelCaptureJob, { params: { jobId } })).data;
    },

    async listWebhookEvents(of) {
      const query = 'jobId' in of ? `jobId=${encodeURIComponent(of.jobId)}` : `batchId=${encodeURIComponent(of.batchId)}`;
      return (await callJson(contract.listWebhookEvents, { query })).data.events;
    },

    async redeliverWebhookEvent(eventId) {
      return (await callJson(contract.redeliverWebhookEvent, { params: { eventId } })).data;
    },

    async listCaptures(filters = {}) {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(filters)) if (value !== undefined) query.set(name, String(value));
      return (await callJson(contract.listCaptures, { query })).data;
    },

    async signedUrl(request, signing) {
      if (!options.keyId || !options.signingSecret) {
        throw new TypeError('signedUrl needs keyId and signingSecret in createClient options (from `daguerre key create --json`)');
      }
      return signCaptureUrl({ baseUrl, keyId: options.keyId, signingSecret: options.signingSecret }, request, signing ?? {});
    },
  };
}

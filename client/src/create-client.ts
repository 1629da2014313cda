import { contract } from '@daguerre/contract';
import { toCaptureBody, toCaptureQuery, needsJsonBody, type CaptureRequest } from './capture-request.js';
import { pollUntilDone, toAsyncCaptureBody, type CaptureJobData } from './async-captures.js';
import { fileOf } from './capture-file.js';
import type { ClientOptions, DaguerreClient } from './daguerre-client.js';
import { signCaptureUrl } from './signed-url.js';
import { pollBatchUntilDone, toBulkBody, type BatchData } from './bulk-captures.js';
import { monitorMethods } from './monitors.js';
import { createRawClient, type RawClient } from './raw-client.js';
import { readJson, routeTransport } from './route-transport.js';

/** `createClient()`: the typed client's methods over one route transport (daguerre-client.ts lists them). */
export function createClient(options: ClientOptions): DaguerreClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  // Looked up on every call, not captured once, so a global fetch replaced later (mocks) is used.
  const fetchImpl: typeof fetch = (input, init) => (options.fetch ?? globalThis.fetch)(input, init);

  const raw: RawClient = createRawClient(baseUrl, options.apiKey, options.fetch ? fetchImpl : undefined);
  const { send, callJson } = routeTransport(options, baseUrl, fetchImpl);

  function sendCapture(request: CaptureRequest, returnFile: boolean): Promise<Response> {
    if (needsJsonBody(request)) {
      const { body, headers } = toCaptureBody(request, returnFile);
      return send(contract.captureWithBody, { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    }
    const { query, headers } = toCaptureQuery(request, returnFile);
    return send(contract.capture, { query, headers });
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

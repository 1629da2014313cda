import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MIME_TYPES, type CaptureFormat } from '@daguerre/contract';
import type { CaptureInput, CaptureJobData, DaguerreClient } from '@daguerre/client';
import { insightFromHeaders, insightOf, type CaptureInsight } from './capture-output.js';
import {
  embeddedResult,
  errorResult,
  imageSize,
  inlineRefusal,
  inlineResult,
  kindOf,
  linkResult,
  mediaTypeOf,
  type CaptureSummary,
  type InlineBudget,
} from './delivery.js';
import type { Delivery } from './tool-inputs.js';

/**
 * A finished capture as the agent asked for it (delivery), for `capture` and `get_capture`: the
 * file inline (an image, or text), as a link that resources/read serves, or embedded when there is
 * nothing to link to. What each format gives is in docs/mcp.md ("What an agent sees").
 */
export interface ResultDependencies {
  client: DaguerreClient;
  budget: InlineBudget;
  /** The link of a job's file, as resources/read matches it. */
  fileUrl(jobId: string): string;
}

const notInline = (id: string, reason: string) => `Cannot return capture ${id} inline: ${reason}. Use delivery "link" (or "auto").`;

/** An async job: the state while it runs, the error when it failed, else its file. */
export async function deliverJob(deps: ResultDependencies, job: CaptureJobData, delivery: Delivery): Promise<CallToolResult> {
  if (job.status === 'failed') {
    return errorResult(
      `Capture ${job.jobId} failed: ${job.error?.code ?? 'OPERATION_FAILED'}: ${job.error?.message ?? 'no reason given'}. Nothing was charged.`,
      {
        id: job.jobId,
        status: job.status,
        error: job.error,
      },
    );
  }
  if (job.status !== 'succeeded' || !job.result) {
    return {
      content: [{ type: 'text', text: `Capture ${job.jobId} is ${job.status}; call get_capture with this jobId again shortly.` }],
      structuredContent: { id: job.jobId, status: job.status },
    };
  }
  const { result } = job;
  const summary: CaptureSummary = {
    id: job.jobId,
    status: 'succeeded',
    url: deps.fileUrl(job.jobId),
    contentType: mediaTypeOf(result.mime),
    bytes: result.fileSize,
    width: null,
    height: null,
    delivery: 'link',
    ...insightOf(result),
  };
  // Decided before downloading where possible: a pdf or an oversized file is a link without a transfer.
  const early = inlineRefusal(summary, deps.budget);
  if (delivery === 'link' || (delivery === 'auto' && early !== undefined))
    return linkResult(summary, delivery === 'link' ? undefined : early);
  if (delivery === 'inline' && early !== undefined) return errorResult(notInline(job.jobId, early), summary);
  const file = await deps.client.getCaptureFile(job.jobId);
  if (kindOf(summary.contentType) === 'image') Object.assign(summary, await imageSize(file.bytes));
  const refusal = inlineRefusal(summary, deps.budget);
  if (refusal !== undefined) {
    if (delivery === 'inline') return errorResult(notInline(job.jobId, refusal), summary);
    return linkResult(summary, refusal);
  }
  return inlineResult(summary, file.bytes);
}

interface SyncCapture {
  requestId: string;
  storageUrl: string | undefined;
  contentType: string;
  bytes: Uint8Array;
  insight: CaptureInsight;
}

function decodeDataUri(uri: string): Uint8Array {
  const comma = uri.indexOf(',');
  return Buffer.from(uri.slice(comma + 1), 'base64');
}

/**
 * A synchronous capture, for a service without async jobs. JSON mode carries the page report,
 * quality, metadata and AI answer in full with the file (as base64 or as text); a pdf has no file
 * in JSON mode, so it is taken binary and described from its headers.
 */
async function captureSync(client: DaguerreClient, options: CaptureInput): Promise<SyncCapture> {
  const format: CaptureFormat = options.format ?? 'png';
  if (format === 'pdf') {
    const file = await client.capture(options);
    return {
      requestId: file.headers['x-request-id'] ?? 'capture',
      storageUrl: file.headers['x-storage-url'],
      contentType: mediaTypeOf(file.contentType),
      bytes: file.bytes,
      insight: insightFromHeaders(file),
    };
  }
  const { data } = await client.captureJson(options);
  const bytes =
    data.content !== undefined
      ? Buffer.from(data.content, 'utf8')
      : data.imageData !== undefined
        ? decodeDataUri(data.imageData)
        : new Uint8Array();
  return { requestId: data.requestId, storageUrl: data.url, contentType: MIME_TYPES[format], bytes, insight: insightOf(data) };
}

/** Without async jobs on the service (no Redis: 503), a synchronous capture: inline when it fits, else a storage link or an embedded resource. */
export async function captureNow(deps: ResultDependencies, options: CaptureInput, delivery: Delivery): Promise<CallToolResult> {
  const capture = await captureSync(deps.client, options);
  const { requestId, storageUrl, bytes } = capture;
  const kind = kindOf(capture.contentType);
  const summary: CaptureSummary = {
    id: requestId,
    status: 'succeeded',
    url: storageUrl ?? '',
    contentType: capture.contentType,
    bytes: bytes.length,
    ...(kind === 'image' ? await imageSize(bytes) : { width: null, height: null }),
    delivery: 'inline',
    ...capture.insight,
  };
  const refusal = inlineRefusal(summary, deps.budget);
  if (refusal === undefined && delivery !== 'link') return inlineResult(summary, bytes);
  if (storageUrl && delivery !== 'inline') return linkResult(summary, refusal, { readable: false });
  // A pdf, an archive or a video has no inline form and no link here: the bytes travel as an embedded resource.
  if (kind !== 'image' && bytes.length <= deps.budget.maxBytes && delivery !== 'link') return embeddedResult(summary, bytes);
  return errorResult(
    `Capture ${requestId} worked (${summary.bytes} bytes, ${summary.contentType}) but cannot be returned: ${refusal ?? 'a link was asked for'}, and this service makes no links (it runs without async jobs, REDIS_URL). Capture a smaller area (no fullPage, a smaller viewport), use jpeg or webp with a lower imageQuality, or requestStorage* options for a storage URL.`,
    summary,
  );
}

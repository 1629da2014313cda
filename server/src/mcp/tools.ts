import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { z } from 'zod';
// The MCP face talks to the service through the published SDK, as any agent's client would.
import { DaguerreError, type CaptureInput, type CaptureJobData, type DaguerreClient } from '@daguerre/client';
import { errorResult, imageSize, inlineRefusal, inlineResult, linkResult, wantsInline, type CaptureSummary, type InlineBudget } from './delivery.js';
import { captureAsyncToolInput, captureToolInput, describeOptions, describeOptionsToolInput, getCaptureToolInput, type Delivery } from './tool-inputs.js';

export interface ToolDependencies {
  /** The SDK client, authenticated with the agent's API key. */
  client: DaguerreClient;
  /** The service's address as the agent reaches it: links point there. */
  publicBaseUrl: string;
  budget: InlineBudget;
  /** How long `capture` waits for its job before answering with the job id (clients give up at 60 s). */
  waitMs?: number;
  pollMs?: number;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const CAPTURE_ANNOTATIONS = { readOnlyHint: true, openWorldHint: true, destructiveHint: false, idempotentHint: false };

/** A service refusal as a tool error the agent can act on: the code, the message naming the field, the details. */
function serviceError(error: unknown): CallToolResult {
  if (error instanceof DaguerreError) {
    const details = error.details === undefined ? '' : ` Details: ${JSON.stringify(error.details)}`;
    return errorResult(`${error.code} (HTTP ${error.status}): ${error.message}.${details}`, {
      error: { status: error.status, code: error.code, message: error.message, ...(error.details !== undefined ? { details: error.details } : {}) },
    });
  }
  throw error;
}

function guarded<A>(handler: (args: A, extra: Extra) => Promise<CallToolResult>) {
  return async (args: A, extra: Extra): Promise<CallToolResult> => {
    try {
      return await handler(args, extra);
    } catch (error) {
      return serviceError(error);
    }
  };
}

export function registerDaguerreTools(server: McpServer, deps: ToolDependencies): void {
  const { client, budget } = deps;
  const waitMs = deps.waitMs ?? 50_000;
  const pollMs = deps.pollMs ?? 500;
  const fileUrl = (jobId: string) => `${deps.publicBaseUrl}/captures/${jobId}/file`;

  async function progress(extra: Extra, step: number, message: string) {
    const token = extra._meta?.progressToken;
    if (token === undefined) return;
    await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: step, message } }).catch(() => undefined);
  }

  /** Polls the job until it ends or `waitMs` passes; undefined when it is still running. */
  async function waitFor(jobId: string, extra: Extra): Promise<CaptureJobData | undefined> {
    const deadline = Date.now() + waitMs;
    for (let step = 1; ; step++) {
      const job = await client.getCapture(jobId);
      if (job.status === 'succeeded' || job.status === 'failed') return job;
      await progress(extra, step, `job ${jobId} is ${job.status}`);
      if (Date.now() + pollMs > deadline || extra.signal.aborted) return undefined;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  /** A finished job as the agent asked for it: the image inline, or a link to its file. */
  async function deliverJob(job: CaptureJobData, delivery: Delivery): Promise<CallToolResult> {
    if (job.status === 'failed') {
      return errorResult(`Capture ${job.jobId} failed: ${job.error?.code ?? 'OPERATION_FAILED'}: ${job.error?.message ?? 'no reason given'}. Nothing was charged.`, {
        id: job.jobId,
        status: job.status,
        error: job.error,
      });
    }
    if (job.status !== 'succeeded' || !job.result) {
      return { content: [{ type: 'text', text: `Capture ${job.jobId} is ${job.status}; call get_capture with this jobId again shortly.` }], structuredContent: { id: job.jobId, status: job.status } };
    }
    const { result } = job;
    const summary: CaptureSummary = { id: job.jobId, status: 'succeeded', url: fileUrl(job.jobId), contentType: result.mime, bytes: result.fileSize, width: null, height: null, delivery: 'link', ...(result.page ? { page: result.page } : {}) };
    // Decided before downloading where possible: a pdf or an oversized file is a link without a transfer.
    const early = inlineRefusal(summary, budget);
    if (delivery === 'link' || (delivery === 'auto' && early !== undefined)) return linkResult(summary, delivery === 'link' ? undefined : early);
    if (delivery === 'inline' && early !== undefined) return errorResult(`Cannot return capture ${job.jobId} inline: ${early}. Use delivery "link".`, summary);
    const file = await client.getCaptureFile(job.jobId);
    Object.assign(summary, await imageSize(file.bytes));
    const refusal = inlineRefusal(summary, budget);
    if (refusal !== undefined) {
      if (delivery === 'inline') return errorResult(`Cannot return capture ${job.jobId} inline: ${refusal}. Use delivery "link".`, summary);
      return linkResult(summary, refusal);
    }
    return inlineResult({ ...summary, delivery: 'inline' }, file.bytes);
  }

  /** Without async jobs on the service (no Redis: 503), a synchronous capture, inline when it fits. */
  async function captureNow(options: CaptureInput, delivery: Delivery): Promise<CallToolResult> {
    const file = await client.capture(options);
    const requestId = file.headers['x-request-id'] ?? 'capture';
    const storageUrl = file.headers['x-storage-url'];
    const summary: CaptureSummary = { id: requestId, status: 'succeeded', url: storageUrl ?? '', contentType: file.contentType, bytes: file.bytes.length, ...(await imageSize(file.bytes)), delivery: 'inline' };
    const refusal = inlineRefusal(summary, budget);
    if (wantsInline(delivery, refusal) && refusal === undefined) return inlineResult(summary, file.bytes);
    if (storageUrl) return linkResult({ ...summary, delivery: 'link' }, refusal);
    if (!summary.contentType.startsWith('image/') && summary.bytes <= budget.maxBytes && delivery !== 'link') {
      // A pdf has no image form; it travels as an embedded resource (a blob, never base64 in text).
      return {
        content: [
          { type: 'resource', resource: { uri: `daguerre://captures/${requestId}`, mimeType: summary.contentType.split(';')[0]!, blob: Buffer.from(file.bytes).toString('base64') } },
          { type: 'text', text: `Capture ${requestId}: ${summary.contentType}, ${summary.bytes} bytes.` },
        ],
        structuredContent: summary,
      };
    }
    return errorResult(
      `Capture ${requestId} worked (${summary.bytes} bytes, ${summary.contentType}) but cannot be returned: ${refusal ?? 'a link was asked for'}, and this service makes no links (it runs without async jobs, REDIS_URL). Capture a smaller area (no fullPage, a smaller viewport), use jpeg or webp with a lower imageQuality, or requestStorage* options for a storage URL.`,
      summary,
    );
  }

  server.registerTool(
    'capture',
    {
      title: 'Capture a web page or HTML',
      description:
        `Screenshot (png, jpeg, webp) or PDF of a web page (url) or inline HTML (html) in headless Chromium; exactly one of url or html. ` +
        `Images up to ${budget.maxBytes} bytes and ${budget.maxSidePx} px on a side come back inline as image content; larger images and every pdf come back as a resource_link to GET /captures/{id}/file (download it with the same API key). ` +
        `Waits up to ${Math.round(waitMs / 1000)} s; a longer capture answers with its jobId for get_capture. Costs 1 credit when it succeeds, nothing when it fails. Call describe_options for every option with its default.`,
      inputSchema: captureToolInput,
      annotations: CAPTURE_ANNOTATIONS,
    },
    guarded(async (args: z.output<typeof captureToolInput>, extra) => {
      const { delivery, ...options } = args;
      let accepted;
      try {
        accepted = await client.captureAsync(options as CaptureInput);
      } catch (error) {
        if (error instanceof DaguerreError && error.status === 503) return captureNow(options as CaptureInput, delivery as Delivery);
        throw error;
      }
      await progress(extra, 0, `job ${accepted.jobId} queued`);
      const job = await waitFor(accepted.jobId, extra);
      if (!job) {
        return {
          content: [{ type: 'text', text: `Capture ${accepted.jobId} is still running after ${Math.round(waitMs / 1000)} s; call get_capture with jobId "${accepted.jobId}".` }],
          structuredContent: { id: accepted.jobId, status: 'active' },
        };
      }
      return deliverJob(job, delivery as Delivery);
    }),
  );

  server.registerTool(
    'capture_async',
    {
      title: 'Queue a capture',
      description:
        'Queues a capture with the same options as capture (plus webhookUrl, called when the job ends) and answers at once with its jobId; poll it with get_capture. Needs async jobs on the service (Redis). Validation, the rate limit and a credit check happen before queuing; 1 credit is charged when the job succeeds.',
      inputSchema: captureAsyncToolInput,
      annotations: CAPTURE_ANNOTATIONS,
    },
    guarded(async (args: z.output<typeof captureAsyncToolInput>) => {
      const accepted = await client.captureAsync(args as CaptureInput);
      const data = { jobId: accepted.jobId, status: accepted.status, statusUrl: `${deps.publicBaseUrl}/captures/${accepted.jobId}` };
      return { content: [{ type: 'text', text: `Queued capture ${accepted.jobId}; call get_capture with this jobId until it has succeeded or failed.` }], structuredContent: data };
    }),
  );

  server.registerTool(
    'get_capture',
    {
      title: 'State and result of a queued capture',
      description:
        'The state of a capture queued by capture_async (or by capture when it ran long): queued, active, failed (with the error) or succeeded, then the file the same way capture returns it (inline image within the budget, else a resource_link). Costs nothing.',
      inputSchema: getCaptureToolInput,
      annotations: { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true },
    },
    guarded(async (args: z.output<typeof getCaptureToolInput>) => deliverJob(await client.getCapture(args.jobId), args.delivery as Delivery)),
  );

  server.registerTool(
    'usage',
    {
      title: 'Credits and rate limit',
      description: 'Credits left, used and allocated in the current billing period of the organization that owns the API key, and its capture rate limit. Costs nothing.',
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true },
    },
    guarded(async () => {
      const report = await client.usage();
      const { credits, rateLimits } = report;
      const text = `${credits.remaining} of ${credits.totalMonthlyAllocation} credits left (${credits.usedThisPeriod} used) until ${credits.periodEnd}; at most ${rateLimits.capture.maxRequestsPerWindow} captures per ${rateLimits.capture.windowMs / 1000} s.`;
      return { content: [{ type: 'text', text }], structuredContent: report as unknown as Record<string, unknown> };
    }),
  );

  server.registerTool(
    'describe_options',
    {
      title: 'Capture options',
      description: 'Every option of capture and capture_async with its type, allowed values, default and rules, from the service contract (the same source as its OpenAPI document).',
      inputSchema: describeOptionsToolInput,
      annotations: { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true },
    },
    async (args: z.output<typeof describeOptionsToolInput>) => {
      const options = describeOptions(args.names);
      const unknown = (args.names ?? []).filter((name) => !options.some((option) => option.name === name));
      if (unknown.length > 0) return errorResult(`Unknown options: ${unknown.join(', ')}. Call describe_options without names for the full list.`);
      const text = options.map((o) => `- ${o.name} (${o.type}${o.values ? `: ${o.values.join(' | ')}` : ''}): ${o.description}`).join('\n');
      return { content: [{ type: 'text', text }], structuredContent: { options } };
    },
  );
}

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { z } from 'zod';
// The MCP face talks to the service through the published SDK, as any agent's client would.
import { DaguerreError, type CaptureInput, type CaptureJobData, type DaguerreClient } from '@daguerre/client';
import { captureOutputSchema } from './capture-output.js';
import { captureNow, deliverJob, type ResultDependencies } from './capture-results.js';
import { errorResult, type InlineBudget } from './delivery.js';
import { captureFileUrl } from './resources.js';
import { captureDescription, getCaptureDescription } from './tool-descriptions.js';
import {
  captureAsyncToolInput,
  captureToolInput,
  describeOptions,
  describeOptionsToolInput,
  getCaptureToolInput,
  listCapturesToolInput,
  type Delivery,
} from './tool-inputs.js';
import { ignoreBecause } from '../ignore-error.js';
import { registerMonitorTools } from './monitor-tools.js';
import { CAPTURE_ANNOTATIONS } from './tool-descriptions.js';
import { guarded, type ToolExtra } from './tool-guard.js';

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

/** Registers the service's tools: capture, capture_async, get_capture, usage, list_captures, describe_options, and the monitor tools (monitor-tools.ts). */
export function registerDaguerreTools(server: McpServer, deps: ToolDependencies): void {
  const { client, budget } = deps;
  const waitMs = deps.waitMs ?? 50_000;
  const pollMs = deps.pollMs ?? 500;
  const results: ResultDependencies = { client, budget, fileUrl: (jobId) => captureFileUrl(deps.publicBaseUrl, jobId) };

  async function progress(extra: ToolExtra, step: number, message: string) {
    const token = extra._meta?.progressToken;
    if (token === undefined) return;
    await extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: step, message } })
      .catch(ignoreBecause('progress is a courtesy: a client that misses it still gets the result'));
  }

  /** Polls the job until it ends or `waitMs` passes; undefined when it is still running. */
  async function waitFor(jobId: string, extra: ToolExtra): Promise<CaptureJobData | undefined> {
    const deadline = Date.now() + waitMs;
    for (let step = 1; ; step++) {
      const job = await client.getCapture(jobId);
      if (job.status === 'succeeded' || job.status === 'failed') return job;
      await progress(extra, step, `job ${jobId} is ${job.status}`);
      if (Date.now() + pollMs > deadline || extra.signal.aborted) return undefined;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  server.registerTool(
    'capture',
    {
      title: 'Capture a web page or HTML',
      description: captureDescription(budget, Math.round(waitMs / 1000)),
      inputSchema: captureToolInput,
      outputSchema: captureOutputSchema,
      annotations: CAPTURE_ANNOTATIONS,
    },
    guarded(async (args: z.output<typeof captureToolInput>, extra) => {
      const { delivery, ...options } = args;
      let accepted;
      try {
        accepted = await client.captureAsync(options as CaptureInput);
      } catch (error) {
        if (error instanceof DaguerreError && error.status === 503)
          return captureNow(results, options as CaptureInput, delivery as Delivery);
        throw error;
      }
      await progress(extra, 0, `job ${accepted.jobId} queued`);
      const job = await waitFor(accepted.jobId, extra);
      if (!job) {
        return {
          content: [
            {
              type: 'text',
              text: `Capture ${accepted.jobId} is still running after ${Math.round(waitMs / 1000)} s; call get_capture with jobId "${accepted.jobId}".`,
            },
          ],
          structuredContent: { id: accepted.jobId, status: 'active' },
        };
      }
      return deliverJob(results, job, delivery as Delivery);
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
      return {
        content: [
          { type: 'text', text: `Queued capture ${accepted.jobId}; call get_capture with this jobId until it has succeeded or failed.` },
        ],
        structuredContent: data,
      };
    }),
  );

  server.registerTool(
    'get_capture',
    {
      title: 'State and result of a queued capture',
      description: getCaptureDescription(budget),
      inputSchema: getCaptureToolInput,
      outputSchema: captureOutputSchema,
      annotations: { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true },
    },
    guarded(async (args: z.output<typeof getCaptureToolInput>) =>
      deliverJob(results, await client.getCapture(args.jobId), args.delivery as Delivery),
    ),
  );

  server.registerTool(
    'usage',
    {
      title: 'Credits and rate limit',
      description:
        'Credits left, used and allocated in the current billing period of the organization that owns the API key, and its capture rate limit. Costs nothing.',
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
    'list_captures',
    {
      title: 'Request log',
      description:
        "The organization's captures, newest first (the request log, GET /captures): time, key, target (secret query values masked), format, outcome (running, succeeded, cached, failed, refused), HTTP status, error code, credits and duration. Filter by status, keyId, from and to (ISO 8601); pass nextCursor as cursor for older ones. Use it to find out why a capture failed. Costs nothing.",
      inputSchema: listCapturesToolInput,
      annotations: { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true },
    },
    guarded(async (args: z.output<typeof listCapturesToolInput>) => {
      const page = await client.listCaptures(args);
      const lines = page.captures.map(
        (c) =>
          `- ${c.createdAt} ${c.status}${c.errorCode ? ` ${c.errorCode}` : ''} ${c.format} ${c.target ?? 'inline HTML'} (${c.kind}, key ${c.keyName ?? c.keyId ?? 'deleted'}, ${c.credits} credits${c.durationMs === null ? '' : `, ${c.durationMs} ms`}) request ${c.requestId}`,
      );
      const more = page.nextCursor ? `\nOlder captures: call list_captures with cursor "${page.nextCursor}".` : '';
      const text = lines.length
        ? `${lines.join('\n')}${more}`
        : 'No captures match (the log keeps the last ' + page.retentionDays + ' days).';
      return { content: [{ type: 'text', text }], structuredContent: page as unknown as Record<string, unknown> };
    }),
  );

  registerMonitorTools(server, deps);

  server.registerTool(
    'describe_options',
    {
      title: 'Capture options',
      description:
        'Every option of capture and capture_async with its type, allowed values, default and rules, from the service contract (the same source as its OpenAPI document).',
      inputSchema: describeOptionsToolInput,
      annotations: { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true },
    },
    async (args: z.output<typeof describeOptionsToolInput>) => {
      const options = describeOptions(args.names);
      const unknown = (args.names ?? []).filter((name) => !options.some((option) => option.name === name));
      if (unknown.length > 0)
        return errorResult(`Unknown options: ${unknown.join(', ')}. Call describe_options without names for the full list.`);
      const text = options.map((o) => `- ${o.name} (${o.type}${o.values ? `: ${o.values.join(' | ')}` : ''}): ${o.description}`).join('\n');
      return { content: [{ type: 'text', text }], structuredContent: { options } };
    },
  );
}

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { z } from 'zod';
import { DiffBodySchema } from '@daguerre/contract';
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
  createMonitorToolInput,
  describeOptions,
  describeOptionsToolInput,
  getCaptureToolInput,
  listCapturesToolInput,
  listMonitorRunsToolInput,
  type Delivery,
} from './tool-inputs.js';
import { ignoreBecause } from '../ignore-error.js';

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
      status: 'failed',
      error: {
        status: error.status,
        code: error.code,
        message: error.message,
        ...(error.details !== undefined ? { details: error.details } : {}),
      },
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
  const results: ResultDependencies = { client, budget, fileUrl: (jobId) => captureFileUrl(deps.publicBaseUrl, jobId) };

  async function progress(extra: Extra, step: number, message: string) {
    const token = extra._meta?.progressToken;
    if (token === undefined) return;
    await extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: step, message } })
      .catch(ignoreBecause('progress is a courtesy: a client that misses it still gets the result'));
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

  // Monitors (docs/monitors.md): the SDK's createMonitor and listRuns.
  const absolute = (link: string | null) => (link && link.startsWith('/') ? `${deps.publicBaseUrl}${link}` : link);
  server.registerTool(
    'create_monitor',
    {
      title: 'Watch a page',
      description:
        "Creates a monitor (POST /monitors): the page is captured every intervalSeconds (at least the server's MONITOR_MIN_INTERVAL_SECONDS) and each run is compared with its baseline (the previous run, or one pinned as golden) in pixels and in words; a run whose changed pixels reach threshold percent (default 1) sends monitor.changed to webhookUrl. ignoreSelectors are regions whose changes never count. Takes the capture options that shape an image. The first run starts at once; each run is charged as its capture. Read its runs with list_monitor_runs.",
      inputSchema: createMonitorToolInput,
      annotations: { readOnlyHint: false, openWorldHint: true, destructiveHint: false, idempotentHint: false },
    },
    guarded(async (args: z.output<typeof createMonitorToolInput>) => {
      const monitor = await client.createMonitor(args as Parameters<DaguerreClient['createMonitor']>[0]);
      const text = `Created monitor ${monitor.monitorId} ("${monitor.name}"): ${monitor.url} every ${monitor.intervalSeconds} s, a change from ${monitor.threshold}% of the pixels${monitor.paused ? ', paused' : '; its first run starts now'}. Call list_monitor_runs with monitorId "${monitor.monitorId}" for its runs.`;
      return { content: [{ type: 'text', text }], structuredContent: monitor as unknown as Record<string, unknown> };
    }),
  );
  server.registerTool(
    'list_monitor_runs',
    {
      title: "A monitor's runs",
      description:
        "A monitor's runs, newest first (GET /monitors/{monitorId}/runs): time, status, credits, the percent of pixels changed against the baseline, the lines of text added and removed, and links to the capture and the diff image (fetched with the API key). Pass nextCursor as cursor for older runs. Costs nothing.",
      inputSchema: listMonitorRunsToolInput,
      annotations: { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true },
    },
    guarded(async ({ monitorId, ...page }: z.output<typeof listMonitorRunsToolInput>) => {
      const { runs, nextCursor } = await client.listRuns(monitorId, page);
      const lines = runs.map((run) => {
        const diff = run.diff
          ? `${run.diff.diffPercent}% changed${run.diff.changed ? ' (past the threshold)' : ''}, text +${run.diff.textAdded.length}/-${run.diff.textRemoved.length} lines`
          : run.status === 'succeeded'
            ? 'no baseline yet'
            : '';
        const links = [
          run.imageUrl ? `capture ${absolute(run.imageUrl)}` : '',
          run.diff?.diffImageUrl ? `diff ${absolute(run.diff.diffImageUrl)}` : '',
        ].filter(Boolean);
        return `- ${run.startedAt} ${run.status}${run.error ? ` ${run.error.code}: ${run.error.message}` : ''}${run.golden ? ' golden' : ''}${diff ? `, ${diff}` : ''}, ${run.credits} credits${links.length ? `; ${links.join(', ')}` : ''} (run ${run.runId})`;
      });
      const more = nextCursor ? `\nOlder runs: call list_monitor_runs with cursor "${nextCursor}".` : '';
      const text = lines.length
        ? `${lines.join('\n')}${more}`
        : 'No runs yet: the first starts as soon as the monitor is created (unless it is paused).';
      return { content: [{ type: 'text', text }], structuredContent: { runs, nextCursor } as unknown as Record<string, unknown> };
    }),
  );

  // POST /diff (docs/monitors.md): the SDK's diff. Its links point at the service as the agent reaches it, not at the loopback the SDK used.
  server.registerTool(
    'diff',
    {
      title: 'Compare two captures',
      description:
        'Compares two captures once (POST /diff): before and after are each {url} (captured now, charged as a capture), {jobId} (a succeeded png capture_async job) or {runId} (a monitor run). Answers the percent of pixels that changed (anti-aliasing ignored), boxes around the changed regions, the lines of the page text added and removed, and links to the before, after and diff images (fetched with the API key). ignoreSelectors: regions whose changes never count. Takes the capture options that shape an image (viewportWidth, fullPage, hideSelectors, ...). A diff that fails charges nothing.',
      inputSchema: DiffBodySchema,
      annotations: CAPTURE_ANNOTATIONS,
    },
    guarded(async (args: z.output<typeof DiffBodySchema>) => {
      const result = await client.diff(args as Parameters<DaguerreClient['diff']>[0]);
      const link = (url: string | null) => (url ? `${deps.publicBaseUrl}${new URL(url).pathname}` : null);
      const data = {
        ...result,
        diff: { ...result.diff, diffImageUrl: link(result.diff.diffImageUrl) },
        before: { ...result.before, imageUrl: link(result.before.imageUrl) },
        after: { ...result.after, imageUrl: link(result.after.imageUrl) },
      };
      const { diff } = data;
      const lines = [
        `${diff.diffPercent.toFixed(3)}% of the pixels changed (${diff.changedPixels} of ${diff.width}×${diff.height}): ${diff.changed ? 'a change' : 'no change'} against the threshold of ${diff.threshold}%; ${diff.regions.length} changed region${diff.regions.length === 1 ? '' : 's'}${diff.regions[0] ? `, the largest at x=${diff.regions[0].x} y=${diff.regions[0].y}, ${diff.regions[0].width}×${diff.regions[0].height}` : ''}.`,
        `Text: ${diff.textAdded.length} line${diff.textAdded.length === 1 ? '' : 's'} added, ${diff.textRemoved.length} removed.`,
        ...diff.textAdded.slice(0, 20).map((line) => `+ ${line}`),
        ...diff.textRemoved.slice(0, 20).map((line) => `- ${line}`),
        `Images: before ${data.before.imageUrl}, after ${data.after.imageUrl}${diff.diffImageUrl ? `, diff ${diff.diffImageUrl}` : ''}. ${data.creditsCharged} credits charged.`,
      ];
      return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: data as unknown as Record<string, unknown> };
    }),
  );

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

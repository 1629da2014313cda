import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { z } from 'zod';
import { DiffBodySchema } from '@daguerre/contract';
import type { DaguerreClient } from '@daguerre/client';
import { CAPTURE_ANNOTATIONS } from './tool-descriptions.js';
import { guarded } from './tool-guard.js';
import { createMonitorToolInput, listMonitorRunsToolInput } from './tool-inputs.js';

/** Registers the tools that watch pages and compare captures (docs/monitors.md): create_monitor, list_monitor_runs, diff. */
export function registerMonitorTools(
  server: McpServer,
  deps: {
    /** The SDK client, authenticated with the agent's API key. */
    client: DaguerreClient;
    /** The service's address as the agent reaches it: links point there. */
    publicBaseUrl: string;
  },
): void {
  const { client } = deps;
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
}

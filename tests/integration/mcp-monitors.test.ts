import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Monitor, MonitorRun } from '../../client/src/index.js';
import { FixtureServer } from '../helpers/fixture-server.js';
import { callTool, connectHttp, textOf } from '../helpers/mcp.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { until } from '../helpers/until.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const COLOURS = ['#1d4ed8', '#b91c1c', '#15803d'];

/**
 * The MCP face of monitors (docs/monitors.md) over streamable HTTP with the MCP SDK's client:
 * create_monitor takes POST /monitors' body (refusals name the field), list_monitor_runs lists each
 * run with its time, status, diff percent, text changes and links, and pages with cursor.
 */
describe('MCP: create_monitor and list_monitor_runs', () => {
  let service: TestService;
  let mcp: Client;
  let monitor: Monitor;
  let version = 0;
  const fixtures = new FixtureServer();
  const prefix = `rs-test-mcp-monitors-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    fixtures.route('/changing', (_req, res) => {
      version += 1;
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<!doctype html><body style="margin:0;font:20px sans-serif"><div style="height:100px;background:${COLOURS[version % COLOURS.length]}"></div><p>Offer ${version}</p></body>`,
        );
    });
    await fixtures.start();
    service = await startTestService({
      credits: 500,
      env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, MONITOR_MIN_INTERVAL_SECONDS: '1', RATE_LIMIT_MAX: '1000' },
    });
    mcp = await connectHttp(service.url, service.apiKey);
  }, 120_000);

  afterAll(async () => {
    await mcp?.close();
    await service?.stop();
    await fixtures.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it('lists both tools with their input schemas: create_monitor from POST /monitors, list_monitor_runs with monitorId, limit, cursor', async () => {
    const tools = (await mcp.listTools()).tools;
    const create = tools.find((t) => t.name === 'create_monitor')!;
    const runs = tools.find((t) => t.name === 'list_monitor_runs')!;
    expect(Object.keys(create.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['url', 'intervalSeconds', 'threshold', 'webhookUrl', 'ignoreSelectors', 'viewportWidth', 'fullPage']),
    );
    expect(create.inputSchema.required).toEqual(expect.arrayContaining(['url', 'intervalSeconds']));
    expect(create.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(Object.keys(runs.inputSchema.properties ?? {}).sort()).toEqual(['cursor', 'limit', 'monitorId']);
    expect(runs.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('create_monitor creates a monitor; bad input is a tool error naming the field, and creates nothing', async () => {
    const refused = await callTool(mcp, 'create_monitor', { url: `${fixtures.url}/changing`, intervalSeconds: 60, threshold: 150 });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('threshold');
    const unknown = await callTool(mcp, 'create_monitor', { url: `${fixtures.url}/changing`, intervalSeconds: 60, format: 'pdf' });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('format');
    expect(await service.client.listMonitors()).toEqual([]);

    const created = await callTool(mcp, 'create_monitor', {
      url: `${fixtures.url}/changing`,
      intervalSeconds: 2,
      threshold: 0.5,
      name: 'Offers',
      viewportWidth: 360,
      viewportHeight: 200,
    });
    expect(created.isError).toBeFalsy();
    monitor = created.structuredContent as unknown as Monitor;
    expect(monitor).toMatchObject({ name: 'Offers', intervalSeconds: 2, threshold: 0.5, paused: false });
    expect(textOf(created)).toContain(`Created monitor ${monitor.monitorId}`);
    expect(textOf(created)).toContain(`list_monitor_runs with monitorId "${monitor.monitorId}"`);
    expect((await service.client.getMonitor(monitor.monitorId)).name).toBe('Offers');
  });

  it('list_monitor_runs: each run with its time, status, diff percent, text changes and links, a page at a time', async () => {
    const compared = await until(
      async () => {
        const { runs } = await service.client.listRuns(monitor.monitorId, { limit: 100 });
        return runs.filter((run) => run.diff?.diffImageUrl).length >= 2 ? runs : undefined;
      },
      90_000,
      'two compared runs',
      250,
    );
    await service.client.pauseMonitor(monitor.monitorId);
    const result = await callTool(mcp, 'list_monitor_runs', { monitorId: monitor.monitorId, limit: 100 });
    expect(result.isError).toBeFalsy();
    const { runs, nextCursor } = result.structuredContent as unknown as { runs: MonitorRun[]; nextCursor: string | null };
    expect(nextCursor).toBeNull();
    expect(runs.map((run) => run.runId)).toEqual(expect.arrayContaining(compared.map((run) => run.runId)));
    const text = textOf(result);
    const changed = compared.find((run) => run.diff?.diffImageUrl)!;
    const line = text.split('\n').find((l) => l.includes(`(run ${changed.runId})`))!;
    expect(line).toContain(changed.startedAt);
    expect(line).toContain('succeeded');
    expect(line).toContain(`${changed.diff!.diffPercent}% changed`);
    expect(line).toContain(`text +${changed.diff!.textAdded.length}/-${changed.diff!.textRemoved.length} lines`);
    expect(line).toContain(`capture ${changed.imageUrl}`);
    expect(line).toContain(`diff ${changed.diff!.diffImageUrl}`);
    expect(text).toContain('no baseline yet');

    const first = await callTool(mcp, 'list_monitor_runs', { monitorId: monitor.monitorId, limit: 1 });
    const page = first.structuredContent as unknown as { runs: MonitorRun[]; nextCursor: string };
    expect(page.runs).toHaveLength(1);
    expect(textOf(first)).toContain(`cursor "${page.nextCursor}"`);
    const second = await callTool(mcp, 'list_monitor_runs', { monitorId: monitor.monitorId, limit: 1, cursor: page.nextCursor });
    expect((second.structuredContent as unknown as { runs: MonitorRun[] }).runs[0]!.runId).not.toBe(page.runs[0]!.runId);

    const missing = await callTool(mcp, 'list_monitor_runs', { monitorId: '00000000-0000-4000-8000-000000000000' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('NOT_FOUND');
  }, 120_000);
});

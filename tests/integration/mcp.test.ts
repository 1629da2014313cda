import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { FORMATS } from '@daguerre/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureBodyFieldNames } from '../helpers/contract-fields.js';
import { decodePng, near } from '../helpers/images.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';

/**
 * The MCP face driven by the MCP SDK's own Client, over both transports, against the live service:
 * streamable HTTP at /mcp (stateless, key in a header) and `daguerre mcp` over stdio.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CLI = fileURLToPath(new URL('../../server/bin/daguerre.js', import.meta.url));
const GREEN = '<body style="margin:0;background:rgb(0,160,60)"><h1>mcp</h1></body>';
const TOOL_NAMES = [
  'capture',
  'capture_async',
  'create_monitor',
  'describe_options',
  'diff',
  'get_capture',
  'list_captures',
  'list_monitor_runs',
  'usage',
];

async function httpClient(service: TestService, apiKey: string): Promise<Client> {
  const client = new Client({ name: 'daguerre-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { requestInit: { headers: { 'X-API-Key': apiKey } } }),
  );
  return client;
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const textOf = (result: CallToolResult) =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => (c as { text: string }).text)
    .join('\n');

describe('the MCP server over streamable HTTP at /mcp (stateless, async jobs on Redis)', () => {
  let service: TestService;
  let client: Client;
  const prefix = `rs-test-mcp-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    service = await startTestService({
      credits: 50,
      env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1', RATE_LIMIT_MAX: '1000', MCP_INLINE_MAX_BYTES: '200000' },
    });
    client = await httpClient(service, service.apiKey);
  });
  afterAll(async () => {
    await client?.close();
    await service?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it("lists the five tools with input schemas derived from the contract's POST /capture body", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
    const capture = tools.find((t) => t.name === 'capture')!;
    const properties = capture.inputSchema.properties as Record<string, { type?: string; enum?: string[]; default?: unknown }>;
    // Every body field of the contract but the key and returnFile, plus delivery: a new contract field shows up here by itself.
    expect(Object.keys(properties).sort()).toEqual(
      [...captureBodyFieldNames().filter((n) => n !== 'apiKey' && n !== 'returnFile'), 'delivery'].sort(),
    );
    expect(properties.fullPage).toMatchObject({ type: 'boolean', default: false });
    // Every output format of the contract, the image formats first.
    expect(properties.format).toMatchObject({ enum: [...FORMATS], default: 'png' });
    expect(properties.format!.enum!.slice(0, 4)).toEqual(['png', 'webp', 'jpeg', 'pdf']);
    expect(properties.delivery).toMatchObject({ enum: ['auto', 'inline', 'link'], default: 'auto' });
    expect((capture.inputSchema as { additionalProperties?: boolean }).additionalProperties).toBe(false);
    expect(capture.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true, destructiveHint: false });
    const asyncTool = tools.find((t) => t.name === 'capture_async')!;
    expect(Object.keys(asyncTool.inputSchema.properties!)).toContain('webhookUrl');
    for (const tool of tools) expect(tool.description, tool.name).toBeTruthy();
  });

  it('capture returns a small image inline as MCP image content, with its summary', async () => {
    const result = await call(client, 'capture', { html: GREEN, viewportWidth: 320, viewportHeight: 200 });
    expect(result.isError, textOf(result)).toBeFalsy();
    const image = result.content.find((c) => c.type === 'image') as { data: string; mimeType: string };
    expect(image.mimeType).toBe('image/png');
    const png = decodePng(Buffer.from(image.data, 'base64'));
    expect([png.width, png.height]).toEqual([320, 200]);
    expect(near(png.pixel(5, 150), [0, 160, 60])).toBe(true);
    expect(result.structuredContent).toMatchObject({
      status: 'succeeded',
      contentType: 'image/png',
      width: 320,
      height: 200,
      delivery: 'inline',
    });
    // Base64 only in the image block, never in text.
    expect(textOf(result)).not.toContain(image.data.slice(0, 40));
  });

  it('capture returns a pdf, and an image over the inline budget, as a resource_link the key can download', async () => {
    const pdf = await call(client, 'capture', { html: GREEN, format: 'pdf' });
    expect(pdf.isError, textOf(pdf)).toBeFalsy();
    const link = pdf.content.find((c) => c.type === 'resource_link') as { uri: string; mimeType: string };
    expect(link.mimeType).toBe('application/pdf');
    expect(link.uri).toMatch(new RegExp(`^${service.url}/captures/[0-9a-f-]{36}/file$`));
    const file = await fetch(link.uri, { headers: { 'X-API-Key': service.apiKey } });
    expect(file.status).toBe(200);
    expect(
      Buffer.from(await file.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');

    // Noise does not compress: 1000×1000 of it is far over the 200000-byte budget of this service.
    const noisy = `<canvas id=c width=1000 height=1000></canvas><script>const x=c.getContext('2d');const d=x.createImageData(1000,1000);let s=1;for(let i=0;i<d.data.length;i++){s^=s<<13;s^=s>>>17;s^=s<<5;d.data[i]=i%4===3?255:s&255}x.putImageData(d,0,0)</script><style>body{margin:0}</style>`;
    const big = await call(client, 'capture', { html: noisy, viewportWidth: 1000, viewportHeight: 1000 });
    expect(big.isError, textOf(big)).toBeFalsy();
    expect(big.content.some((c) => c.type === 'image')).toBe(false);
    expect(big.content.find((c) => c.type === 'resource_link')).toMatchObject({ mimeType: 'image/png' });
    expect(big.structuredContent).toMatchObject({ delivery: 'link', contentType: 'image/png' });
    expect((big.structuredContent as { bytes: number }).bytes).toBeGreaterThan(200_000);
    expect(textOf(big)).toMatch(/over the inline budget of 200000 bytes/);
  });

  it('refuses bad arguments with the field named: by schema (SDK) and by the contract rules (service)', async () => {
    const badType = await call(client, 'capture', { html: GREEN, viewportWidth: 'wide' });
    expect(badType.isError).toBe(true);
    expect(textOf(badType)).toMatch(/viewportWidth/);
    const both = await call(client, 'capture', { html: GREEN, url: 'https://example.com' });
    expect(both.isError).toBe(true);
    expect(textOf(both)).toMatch(/VALIDATION_ERROR/);
    expect(textOf(both)).toMatch(/exactly one of url or html/);
    const unknown = await call(client, 'capture', { html: GREEN, fullpage: true });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/fullpage/);
  });

  it('capture_async queues, get_capture polls to the result; usage counts the credits; describe_options explains', async () => {
    const accepted = await call(client, 'capture_async', { html: GREEN, viewportWidth: 200, viewportHeight: 120 });
    expect(accepted.isError, textOf(accepted)).toBeFalsy();
    const { jobId } = accepted.structuredContent as { jobId: string };
    expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
    let state: CallToolResult;
    for (;;) {
      state = await call(client, 'get_capture', { jobId });
      const status = (state.structuredContent as { status: string }).status;
      if (status === 'succeeded' || status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(state.isError, textOf(state)).toBeFalsy();
    expect(state.content.find((c) => c.type === 'image')).toMatchObject({ mimeType: 'image/png' });

    const usage = await call(client, 'usage', {});
    expect(usage.isError, textOf(usage)).toBeFalsy();
    const credits = (usage.structuredContent as { credits: { usedThisPeriod: number; remaining: number } }).credits;
    // Three captures and one async job so far, each 1 credit.
    expect(credits.usedThisPeriod).toBe(4);
    expect(credits.remaining).toBe(46);

    const described = await call(client, 'describe_options', { names: ['fullPage', 'device'] });
    const options = (
      described.structuredContent as { options: Array<{ name: string; type: string; values?: string[]; description: string }> }
    ).options;
    expect(options.map((o) => o.name)).toEqual(['device', 'fullPage']);
    expect(options[0]!.values).toContain('iphone-15');
    expect(options[1]).toMatchObject({ type: 'boolean' });
    expect(options[1]!.description).toMatch(/Default: false/);
  });

  it('refuses a missing or wrong key before any tool runs (403, see mcp-http-guards.test.ts), and GET is not allowed (stateless)', async () => {
    await expect(httpClient(service, 'rs_not-a-key')).rejects.toThrow(/Invalid API key/);
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const bare = await fetch(`${service.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initialize),
    });
    expect(bare.status).toBe(403);
    expect(await bare.json()).toMatchObject({ jsonrpc: '2.0', error: { data: { code: 'API_KEY_REQUIRED' } } });
    const get = await fetch(`${service.url}/mcp`, { headers: { 'X-API-Key': service.apiKey } });
    expect(get.status).toBe(405);
  });
});

describe('`daguerre mcp` over stdio, and /mcp on a service without async jobs', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ credits: 20, env: { RATE_LIMIT_MAX: '1000' } });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('serves the tools to a client that spawns it with DAGUERRE_URL and DAGUERRE_API_KEY', async () => {
    const client = new Client({ name: 'daguerre-stdio-test', version: '1.0.0' });
    // A child of StdioClientTransport inherits only a few variables: the two settings are passed on purpose.
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp'],
        env: { ...getDefaultEnvironment(), DAGUERRE_URL: service.url, DAGUERRE_API_KEY: service.apiKey },
        stderr: 'pipe',
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
      // No Redis on this service: capture falls back to a synchronous capture, still inline.
      const result = await call(client, 'capture', { html: GREEN, viewportWidth: 240, viewportHeight: 160 });
      expect(result.isError, textOf(result)).toBeFalsy();
      const image = result.content.find((c) => c.type === 'image') as { data: string };
      expect(decodePng(Buffer.from(image.data, 'base64')).width).toBe(240);
      const usage = await call(client, 'usage', {});
      expect((usage.structuredContent as { credits: { usedThisPeriod: number } }).credits.usedThisPeriod).toBe(1);
      const queued = await call(client, 'capture_async', { html: GREEN });
      expect(queued.isError).toBe(true);
      expect(textOf(queued)).toMatch(/SERVICE_UNAVAILABLE.*REDIS_URL/);
    } finally {
      await client.close();
    }
  });

  it('takes --url and --api-key instead, and a pdf without async jobs comes back as an embedded resource', async () => {
    const client = new Client({ name: 'daguerre-stdio-args', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--url', service.url, '--api-key', service.apiKey],
        env: getDefaultEnvironment(),
        stderr: 'pipe',
      }),
    );
    try {
      const pdf = await call(client, 'capture', { html: GREEN, format: 'pdf' });
      expect(pdf.isError, textOf(pdf)).toBeFalsy();
      const resource = pdf.content.find((c) => c.type === 'resource') as { resource: { mimeType: string; blob: string } };
      expect(resource.resource.mimeType).toBe('application/pdf');
      expect(Buffer.from(resource.resource.blob, 'base64').subarray(0, 5).toString()).toBe('%PDF-');
    } finally {
      await client.close();
    }
  });

  it('answers POST /captures on this service without Redis with 503 and a Retry-After', async () => {
    const response = await service.get('/captures', {
      method: 'POST',
      headers: { 'X-API-Key': service.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ html: GREEN }),
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('300');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('exits with a message on stderr when it has no service address or key', async () => {
    const { spawnSync } = await import('node:child_process');
    const run = spawnSync(process.execPath, [CLI, 'mcp'], { env: getDefaultEnvironment(), encoding: 'utf8', timeout: 60_000 });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/--url or DAGUERRE_URL.*--api-key or DAGUERRE_API_KEY/);
  });
});

describe('/mcp behind a TLS proxy with REQUIRE_HTTPS', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ credits: 5, env: { REQUIRE_HTTPS: 'true', TRUST_PROXY: 'true' } });
  });
  afterAll(async () => {
    await service?.stop();
  });

  const connect = async (headers: Record<string, string>) => {
    const client = new Client({ name: 'daguerre-https-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
        requestInit: { headers: { 'X-API-Key': service.apiKey, ...headers } },
      }),
    );
    return client;
  };

  it('refuses plain HTTP, and over HTTPS its own loopback calls pass the check a forged header cannot', async () => {
    await expect(connect({})).rejects.toThrow(/HTTPS_REQUIRED|API keys must be sent over HTTPS/);
    const client = await connect({ 'X-Forwarded-Proto': 'https' });
    try {
      const usage = await call(client, 'usage', {});
      expect(usage.isError, textOf(usage)).toBeFalsy();
      expect((usage.structuredContent as { credits: { remaining: number } }).credits.remaining).toBe(5);
    } finally {
      await client.close();
    }
    // Guessing the loopback marker gets a plain HTTP request nowhere.
    const forged = await service.get('/usage', { headers: { 'X-API-Key': service.apiKey, 'X-Daguerre-Mcp-Loopback': 'a'.repeat(64) } });
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('HTTPS_REQUIRED');
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, connectHttp, INITIALIZE, postMcp, textOf } from '../helpers/mcp.js';
import { runInspector } from '../helpers/mcp-inspector.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * What /mcp answers before any tool runs (docs/mcp.md, "Authentication" and "Errors"): a body that is
 * not JSON-RPC gets a JSON-RPC error, never the REST error body, and is charged nothing; a foreign
 * Origin gets 403; a missing or wrong key gets 403 with a message MCP hosts show as it is, checked
 * with the SDK's Client (with and without an OAuth provider) and with the MCP Inspector's CLI.
 */
const ALLOWED = 'https://app.example.com';

/** An OAuth provider that records what the SDK's transport asks of it. */
function recordingProvider(calls: string[]): OAuthClientProvider {
  return {
    redirectUrl: 'http://127.0.0.1:9/callback',
    clientMetadata: { redirect_uris: ['http://127.0.0.1:9/callback'], client_name: 'daguerre-test' },
    clientInformation: () => undefined,
    tokens: () => undefined,
    saveTokens: () => void calls.push('saveTokens'),
    redirectToAuthorization: () => void calls.push('redirectToAuthorization'),
    saveCodeVerifier: () => void calls.push('saveCodeVerifier'),
    codeVerifier: () => '',
  };
}

describe('/mcp before any tool runs', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ credits: 10, env: { RATE_LIMIT_MAX: '1000', MCP_ALLOWED_ORIGINS: ALLOWED } });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('answers every malformed body with a JSON-RPC error (-32700 or -32600, HTTP 400), with or without a key, and charges nothing', async () => {
    const deep = `${'['.repeat(40)}${']'.repeat(40)}`;
    const cases: Array<[string, string, number, number]> = [
      ['broken JSON', '{"jsonrpc": "2.0", "method": ', 400, -32700],
      ['empty body', '', 400, -32700],
      ['not UTF-8', '\u00ff', 400, -32700],
      ['nested 40 deep', deep, 400, -32700],
      ['an empty object', '{}', 400, -32600],
      ['a string', '"tools/list"', 400, -32600],
      ['null', 'null', 400, -32600],
      ['an empty batch', '[]', 400, -32600],
      ['jsonrpc 1.0', '{"jsonrpc": "1.0", "method": "tools/list", "id": 1}', 400, -32600],
      ['params not an object', '{"jsonrpc": "2.0", "method": "tools/call", "params": "capture", "id": 2}', 400, -32600],
      ['a batch with one bad message', `[${INITIALIZE}, {"id": 3}]`, 400, -32600],
    ];
    for (const headers of [{ 'X-API-Key': service.apiKey }, {}] as Array<Record<string, string>>) {
      for (const [name, body, status, code] of cases) {
        const raw = name === 'not UTF-8' ? Buffer.from([0xff, 0xfe, 0x7b]) : body;
        const response = await fetch(`${service.url}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          body: raw,
        });
        expect(response.status, name).toBe(status);
        const answer = (await response.json()) as { jsonrpc: string; error: { code: number; message: string }; success?: unknown };
        expect(answer, name).toMatchObject({ jsonrpc: '2.0', error: { code } });
        expect(answer.success, `${name}: never the REST error body`).toBeUndefined();
      }
    }
    // The id of a refused request is answered when it can be read.
    expect(
      await (await postMcp(service.url, '{"jsonrpc": "2.0", "method": 5, "id": 77}', { 'X-API-Key': service.apiKey })).json(),
    ).toMatchObject({ id: 77, error: { code: -32600 } });
    const wrongType = await postMcp(service.url, INITIALIZE, { 'X-API-Key': service.apiKey, 'content-type': 'text/plain' });
    expect([wrongType.status, ((await wrongType.json()) as { error: { code: number } }).error.code]).toEqual([415, -32600]);
    const tooLarge = await postMcp(
      service.url,
      JSON.stringify({ jsonrpc: '2.0', method: 'ping', id: 1, params: { pad: 'x'.repeat(1_100_000) } }),
      { 'X-API-Key': service.apiKey },
    );
    expect([tooLarge.status, ((await tooLarge.json()) as { jsonrpc: string }).jsonrpc]).toEqual([413, '2.0']);
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${service.url}/mcp`, { method, headers: { 'X-API-Key': service.apiKey } });
      expect([response.status, response.headers.get('allow')], method).toEqual([405, 'POST']);
      expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(0);
  });

  it('checks Origin: none, its own and MCP_ALLOWED_ORIGINS pass; any other (null included) is 403 even with a valid key', async () => {
    const withOrigin = (origin?: string) =>
      postMcp(service.url, INITIALIZE, { 'X-API-Key': service.apiKey, ...(origin ? { Origin: origin } : {}) });
    for (const origin of [undefined, service.url, ALLOWED]) expect((await withOrigin(origin)).status, String(origin)).toBe(200);
    for (const origin of ['http://evil.example', 'null', `${service.url}.evil.example`, 'https://app.example.com:8443']) {
      const response = await withOrigin(origin);
      expect(response.status, origin).toBe(403);
      expect(await response.json(), origin).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32000, data: { code: 'ORIGIN_NOT_ALLOWED' } },
      });
    }
    // The SDK's client sends no Origin: it passes, and so does one that names the allowed origin.
    const client = await connectHttp(service.url, service.apiKey, { Origin: ALLOWED });
    expect(textOf(await callTool(client, 'usage', {}))).toMatch(/credits left/);
    await client.close();
  });

  it('refuses a missing, wrong or malformed key with 403, a JSON-RPC error naming the header, and WWW-Authenticate naming the key scheme', async () => {
    for (const [headers, code] of [
      [{}, 'API_KEY_REQUIRED'],
      [{ 'X-API-Key': 'rs_not-a-key' }, 'INVALID_API_KEY'],
      [{ Authorization: 'Bearer not-even-a-key' }, 'INVALID_API_KEY'],
    ] as const) {
      const response = await postMcp(service.url, INITIALIZE, headers);
      expect(response.status, code).toBe(403);
      expect(response.headers.get('www-authenticate')).toBe('ApiKey realm="daguerre", header="X-API-Key"');
      const body = (await response.json()) as { error: { code: number; message: string; data: { code: string } } };
      expect(body.error).toMatchObject({ code: -32001, data: { code } });
      expect(body.error.message).toMatch(/header X-API-Key .*does not use OAuth/);
    }
    // Authorization: Bearer <key> works as well as X-API-Key.
    const bearer = new Client({ name: 't', version: '1' });
    await bearer.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${service.apiKey}` } },
      }),
    );
    expect((await bearer.listTools()).tools.length).toBe(9);
    await bearer.close();
  });

  it("the SDK's Client shows the 403 as a key error and starts no OAuth, where a 401 sends it into OAuth discovery", async () => {
    const calls: string[] = [];
    const client = new Client({ name: 't', version: '1' });
    const refused = await client
      .connect(
        new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
          authProvider: recordingProvider(calls),
          requestInit: { headers: { 'X-API-Key': 'rs_wrong' } },
        }),
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(403);
    expect(String(refused)).toMatch(/Invalid API key \(INVALID_API_KEY\)/);
    expect(calls).toEqual([]);

    // The same client against a 401 (what /mcp answered before): it goes looking for an OAuth server.
    const seen: string[] = [];
    const stub: Server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(req.url === '/mcp' ? 401 : 404, {
        'content-type': 'application/json',
        'www-authenticate': 'ApiKey realm="daguerre", header="X-API-Key"',
      });
      res.end('{}');
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}/mcp`;
      await expect(
        new Client({ name: 't', version: '1' }).connect(
          new StreamableHTTPClientTransport(new URL(url), { authProvider: recordingProvider([]) }),
        ),
      ).rejects.toThrow();
      expect(seen.some((line) => line.startsWith('GET /.well-known/oauth'))).toBe(true);
    } finally {
      stub.close();
    }
  });

  it(
    "the MCP Inspector's CLI prints the key error for a wrong key (no OAuth sign-in), and lists the tools with the right one",
    { timeout: 120_000 },
    async () => {
      const wrong = await runInspector([
        `${service.url}/mcp`,
        '--transport',
        'http',
        '--header',
        'X-API-Key: rs_wrong',
        '--method',
        'tools/list',
      ]);
      expect(wrong.code).not.toBe(0);
      // The CLI prints its error as JSON on stderr.
      expect(wrong.stderr).toMatch(/"status":403/);
      expect(wrong.stderr).toMatch(/Invalid API key \(INVALID_API_KEY\)/);
      expect(`${wrong.stdout}${wrong.stderr}`).not.toMatch(/OAuth requires|Dynamic Client Registration|authorization server/i);
      const right = await runInspector([
        `${service.url}/mcp`,
        '--transport',
        'http',
        '--header',
        `X-API-Key: ${service.apiKey}`,
        '--method',
        'tools/list',
      ]);
      expect(right.code, right.stderr).toBe(0);
      expect((right.json as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain('capture');
    },
  );
});

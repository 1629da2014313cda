import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** An MCP SDK client on a service's /mcp with the key in X-API-Key, as docs/mcp.md configures it. */
export async function connectHttp(serviceUrl: string, apiKey: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'daguerre-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${serviceUrl}/mcp`), { requestInit: { headers: { 'X-API-Key': apiKey, ...headers } } }),
  );
  return client;
}

export const callTool = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

export const textOf = (result: CallToolResult) =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => (c as { text: string }).text)
    .join('\n');

/** A raw POST to /mcp with the headers a streamable HTTP client sends. */
export function postMcp(serviceUrl: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${serviceUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});

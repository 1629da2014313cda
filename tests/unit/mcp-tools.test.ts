import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { captureFields } from '@daguerre/contract';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../client/src/index.js';
import { inlineRefusal } from '../../server/src/mcp/delivery.js';
import { createDaguerreMcpServer } from '../../server/src/mcp/mcp-server.js';

async function connected(): Promise<Client> {
  // Tools that reach the service are exercised live in tests/integration/mcp.test.ts; these need none.
  const server = createDaguerreMcpServer({ client: createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' }), publicBaseUrl: 'http://127.0.0.1:9', budget: { maxBytes: 1000, maxSidePx: 100 } });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'unit', version: '1' });
  await client.connect(clientSide);
  return client;
}

describe('MCP tools without a service', () => {
  it('describe_options lists every capture field of the contract with its description, and refuses unknown names', async () => {
    const client = await connected();
    const all = (await client.callTool({ name: 'describe_options', arguments: {} })) as CallToolResult;
    const names = (all.structuredContent as { options: Array<{ name: string }> }).options.map((o) => o.name);
    for (const field of Object.keys(captureFields).filter((n) => n !== 'apiKey' && n !== 'returnFile')) expect(names, field).toContain(field);
    expect(names).toEqual(expect.arrayContaining(['webhookUrl', 'delivery']));
    const unknown = (await client.callTool({ name: 'describe_options', arguments: { names: ['fullpage'] } })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    await client.close();
  });

  it('keeps pdfs and images over the byte or pixel budget out of inline results', () => {
    const budget = { maxBytes: 1000, maxSidePx: 100 };
    expect(inlineRefusal({ contentType: 'image/png', bytes: 999, width: 100, height: 50 }, budget)).toBeUndefined();
    expect(inlineRefusal({ contentType: 'image/png', bytes: 1001, width: 10, height: 10 }, budget)).toMatch(/inline budget of 1000 bytes/);
    expect(inlineRefusal({ contentType: 'image/webp', bytes: 10, width: 10, height: 101 }, budget)).toMatch(/101 px/);
    expect(inlineRefusal({ contentType: 'application/pdf', bytes: 10, width: null, height: null }, budget)).toMatch(/not an image/);
  });
});

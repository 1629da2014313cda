import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { captureFields, FORMATS, MIME_TYPES } from '@daguerre/contract';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../client/src/index.js';
import { inlineRefusal, kindOf } from '../../server/src/mcp/delivery.js';
import { createDaguerreMcpServer } from '../../server/src/mcp/mcp-server.js';

async function connected(): Promise<Client> {
  // Tools that reach the service are exercised live in tests/integration/mcp.test.ts; these need none.
  const server = createDaguerreMcpServer({
    client: createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' }),
    publicBaseUrl: 'http://127.0.0.1:9',
    budget: { maxBytes: 1000, maxSidePx: 100 },
  });
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
    for (const field of Object.keys(captureFields).filter((n) => n !== 'apiKey' && n !== 'returnFile'))
      expect(names, field).toContain(field);
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
    expect(inlineRefusal({ contentType: 'application/pdf', bytes: 10, width: null, height: null }, budget)).toMatch(/neither an image/);
    // Text is sent twice (content and structuredContent.text): half the budget.
    expect(inlineRefusal({ contentType: 'text/markdown; charset=utf-8', bytes: 500, width: null, height: null }, budget)).toBeUndefined();
    expect(inlineRefusal({ contentType: 'text/markdown', bytes: 501, width: null, height: null }, budget)).toMatch(
      /inline budget of 500 bytes for text/,
    );
  });

  it('sorts every format of the contract into what an agent can view, read or only download', () => {
    const kinds = Object.fromEntries(FORMATS.map((format) => [format, kindOf(MIME_TYPES[format])]));
    expect(kinds).toEqual({
      png: 'image',
      webp: 'image',
      jpeg: 'image',
      pdf: 'binary',
      html: 'text',
      markdown: 'text',
      text: 'text',
      mhtml: 'binary',
      mp4: 'binary',
      webm: 'binary',
      gif: 'binary',
    });
    expect(kindOf('application/json')).toBe('text');
    expect(kindOf('application/ld+json')).toBe('text');
  });

  it('names every format and every option of the contract in the capture description and in the instructions, and declares the output schema', async () => {
    const client = await connected();
    const { tools } = await client.listTools();
    const capture = tools.find((t) => t.name === 'capture')!;
    const options = Object.keys(capture.inputSchema.properties!);
    expect(options.length).toBeGreaterThan(60);
    const instructions = client.getInstructions()!;
    for (const text of [capture.description!, instructions]) {
      for (const format of FORMATS) expect(text, format).toMatch(new RegExp(`\\b${format}\\b`));
      for (const option of options) expect(text, option).toMatch(new RegExp(`\\b${option}\\b`));
    }
    expect(capture.description).not.toMatch(/Screenshot \(png, jpeg, webp\) or PDF/);
    for (const name of ['capture', 'get_capture']) {
      const output = tools.find((t) => t.name === name)!.outputSchema as { properties: Record<string, unknown> };
      expect(Object.keys(output.properties), name).toEqual(
        expect.arrayContaining(['id', 'status', 'page', 'quality', 'metadata', 'aiResult', 'text']),
      );
    }
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['http://127.0.0.1:9/captures/{jobId}/file']);
    await client.close();
  });
});

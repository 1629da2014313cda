import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createClient } from '@daguerre/client';
import type { InlineBudget } from './delivery.js';
import { createDaguerreMcpServer } from './mcp-server.js';
import { normalizedBaseUrl } from './resources.js';

export interface StdioOptions {
  url: string;
  apiKey: string;
  budget: InlineBudget;
}

/**
 * `daguerre mcp`: an MCP server on stdin/stdout for a local agent (Claude Desktop, an IDE), talking
 * to a Daguerre service over HTTP with the SDK. stdout carries the protocol only: nothing else may
 * be printed there.
 */
export async function serveMcpOverStdio(options: StdioOptions): Promise<void> {
  const publicBaseUrl = normalizedBaseUrl(options.url);
  // Labels its captures as MCP's in the request log (a label only: it grants nothing).
  const client = createClient({
    baseUrl: publicBaseUrl,
    apiKey: options.apiKey,
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'x-daguerre-client': 'mcp' } }),
  });
  const server = createDaguerreMcpServer({ client, publicBaseUrl, budget: options.budget });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.close();
}

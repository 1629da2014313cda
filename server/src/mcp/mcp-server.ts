import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { readFileSync } from 'node:fs';
import { packageFile } from '../package-files.js';
import { registerDaguerreTools, type ToolDependencies } from './tools.js';

const serverPackage = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string };

/** One MCP server with Daguerre's tools, for one connection (stdio) or one request (stateless HTTP). */
export function createDaguerreMcpServer(deps: ToolDependencies): McpServer {
  const server = new McpServer(
    { name: 'daguerre', version: serverPackage.version },
    {
      instructions:
        'Daguerre captures web pages and HTML as images or PDFs. Use capture for a screenshot you want to look at, capture_async + get_capture for long or many captures, usage for the credits left, describe_options for every capture option.',
    },
  );
  registerDaguerreTools(server, deps);
  return server;
}

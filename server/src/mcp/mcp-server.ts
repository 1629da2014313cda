import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { readFileSync } from 'node:fs';
import { packageFile } from '../package-files.js';
import { normalizedBaseUrl, registerCaptureResources } from './resources.js';
import { serverInstructions } from './tool-descriptions.js';
import { registerDaguerreTools, type ToolDependencies } from './tools.js';

const serverPackage = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string };

/** One MCP server with Daguerre's tools and the capture files as resources, for one connection (stdio) or one request (stateless HTTP). */
export function createDaguerreMcpServer(deps: ToolDependencies): McpServer {
  const server = new McpServer({ name: 'daguerre', version: serverPackage.version }, { instructions: serverInstructions(deps.budget) });
  // Links and the resource template are written from the same normalized address, so every link matches.
  const normalized = { ...deps, publicBaseUrl: normalizedBaseUrl(deps.publicBaseUrl) };
  registerDaguerreTools(server, normalized);
  registerCaptureResources(server, normalized);
  return server;
}

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePng, near } from '../helpers/images.js';
import { installPackedDaguerre, type InstalledDaguerre } from '../helpers/installed-package.js';
import { runInspector } from '../helpers/mcp-inspector.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * Every host configuration docs/mcp.md gives, tested as written: the blocks marked
 * `<!-- mcp-config: NAME -->` (JSON) or `<!-- mcp-command: NAME -->` (a `claude mcp add` line) are
 * read from the page, the placeholders a user replaces (the address and the key) are replaced, each
 * host's own reading is applied (Claude Code expands ${VAR} from its environment, Cursor infers
 * the transport from url or command, VS Code asks for its inputs), and each server entry is used by
 * the MCP SDK's Client and by the MCP Inspector's CLI: tools/list and a capture of inline HTML to
 * PNG. `daguerre` is the packed server installed with `npm install -g`, started from an empty folder.
 */
const DOC = readFileSync(new URL('../../docs/mcp.md', import.meta.url), 'utf8');
const PLACEHOLDER_URL = 'https://capture.example.com';
const PLACEHOLDER_KEY = 'rs_your_key';
const GREEN = '<body style="margin:0;background:rgb(0,160,60)"><h1>host</h1></body>';

type Entry =
  | { type: 'stdio'; command: string; args: string[]; env: Record<string, string> }
  | { type: 'http'; url: string; headers: Record<string, string> };

function markedBlocks(kind: 'mcp-config' | 'mcp-command'): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const match of DOC.matchAll(new RegExp(`<!-- ${kind}: ([a-z0-9-]+) -->\\n\`\`\`(?:json|sh)\\n([\\s\\S]*?)\\n\`\`\``, 'g')))
    blocks.set(match[1]!, match[2]!);
  return blocks;
}

const asUser = (text: string, service: TestService) =>
  text.replaceAll(PLACEHOLDER_URL, service.url).replaceAll(PLACEHOLDER_KEY, service.apiKey);

/** What a host makes of one entry of its JSON: `type` as written, or inferred from url/command as Cursor and Claude Desktop do. */
function entryOf(raw: Record<string, unknown>): Entry {
  const type = raw.type ?? (raw.url ? 'http' : 'stdio');
  if (type === 'http') return { type: 'http', url: String(raw.url), headers: (raw.headers ?? {}) as Record<string, string> };
  expect(type).toBe('stdio');
  return {
    type: 'stdio',
    command: String(raw.command),
    args: (raw.args ?? []) as string[],
    env: (raw.env ?? {}) as Record<string, string>,
  };
}

/** Claude Code's expansion in .mcp.json: ${VAR} and ${VAR:-default}. */
function expandLikeClaudeCode(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}/g,
    (_all, name: string, fallback?: string) => env[name] ?? fallback ?? `\${${name}}`,
  );
}

/**
 * `claude mcp add [--transport t] <name> [--env K=V…] [--header "H: V"…] <url> | … -- <command> [args…]`,
 * read as Claude Code's CLI reads it: --env and --header take every value up to the next option, so
 * a name written after them is taken for a variable ("Invalid environment variable format").
 */
function parseClaudeMcpAdd(line: string): { name: string; entry: Entry } {
  const tokens = [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
  expect(tokens.slice(0, 3)).toEqual(['claude', 'mcp', 'add']);
  let transport = 'stdio';
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const positional: string[] = [];
  let rest: string[] = [];
  const values = (from: number) => {
    const taken: string[] = [];
    while (from < tokens.length && !tokens[from]!.startsWith('-')) taken.push(tokens[from++]!);
    return taken;
  };
  for (let i = 3; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === '--') {
      rest = tokens.slice(i + 1);
      break;
    }
    if (token === '--transport' || token === '-t') transport = tokens[++i]!;
    else if (token === '--env' || token === '-e') {
      for (const value of values(i + 1)) {
        if (!value.includes('=')) throw new Error(`Invalid environment variable format: ${value}`);
        const [key, ...rest] = value.split('=');
        env[key!] = rest.join('=');
        i++;
      }
    } else if (token === '--header' || token === '-H') {
      for (const value of values(i + 1)) {
        const [key, ...rest] = value.split(':');
        headers[key!.trim()] = rest.join(':').trim();
        i++;
      }
    } else positional.push(token);
  }
  if (transport === 'http') return { name: positional[0]!, entry: { type: 'http', url: positional[1]!, headers } };
  return { name: positional[0]!, entry: { type: 'stdio', command: rest[0]!, args: rest.slice(1), env } };
}

/** Every server entry of the page, as its host reads it, for a user of this service. */
function hostEntries(service: TestService): Array<{ host: string; name: string; entry: Entry }> {
  const configs = markedBlocks('mcp-config');
  const commands = markedBlocks('mcp-command');
  expect([...configs.keys()].sort()).toEqual(['claude-code-project', 'claude-desktop', 'cursor', 'vscode']);
  expect([...commands.keys()].sort()).toEqual(['claude-code-http', 'claude-code-stdio']);
  const entries: Array<{ host: string; name: string; entry: Entry }> = [];
  const servers = (host: string, map: Record<string, Record<string, unknown>>) => {
    for (const [name, raw] of Object.entries(map)) entries.push({ host, name, entry: entryOf(raw) });
  };
  servers(
    'claude-desktop',
    (JSON.parse(asUser(configs.get('claude-desktop')!, service)) as { mcpServers: Record<string, Record<string, unknown>> }).mcpServers,
  );
  for (const [host, line] of commands) entries.push({ host, ...parseClaudeMcpAdd(asUser(line, service)) });
  // .mcp.json holds no key: the user exports the variables and Claude Code expands them.
  const project = configs.get('claude-code-project')!;
  expect(project).not.toContain(PLACEHOLDER_KEY);
  servers(
    'claude-code-project',
    (
      JSON.parse(expandLikeClaudeCode(project, { DAGUERRE_URL: service.url, DAGUERRE_API_KEY: service.apiKey })) as {
        mcpServers: Record<string, Record<string, unknown>>;
      }
    ).mcpServers,
  );
  servers(
    'cursor',
    (JSON.parse(asUser(configs.get('cursor')!, service)) as { mcpServers: Record<string, Record<string, unknown>> }).mcpServers,
  );
  // VS Code asks for each ${input:id} declared in inputs (a password prompt for the key).
  const vscode = JSON.parse(asUser(configs.get('vscode')!, service)) as {
    inputs: Array<{ id: string; type: string; password?: boolean }>;
    servers: Record<string, Record<string, unknown>>;
  };
  expect(vscode.inputs).toEqual([expect.objectContaining({ id: 'daguerre-api-key', type: 'promptString', password: true })]);
  servers(
    'vscode',
    JSON.parse(JSON.stringify(vscode.servers).replaceAll('${input:daguerre-api-key}', service.apiKey)) as Record<
      string,
      Record<string, unknown>
    >,
  );
  // Claude Desktop's file starts local servers only.
  expect(entries.filter((e) => e.host === 'claude-desktop').map((e) => e.entry.type)).toEqual(['stdio']);
  return entries;
}

function expectGreenPng(result: CallToolResult, label: string) {
  expect(result.isError, label).toBeFalsy();
  const image = result.content.find((c) => c.type === 'image') as { data: string; mimeType: string } | undefined;
  expect(image?.mimeType, label).toBe('image/png');
  const png = decodePng(Buffer.from(image!.data, 'base64'));
  expect([png.width, png.height], label).toEqual([200, 120]);
  expect(near(png.pixel(5, 100), [0, 160, 60]), label).toBe(true);
}

describe('the host configurations of docs/mcp.md, as written', () => {
  let service: TestService;
  let installed: InstalledDaguerre;
  let emptyFolder: string;

  beforeAll(async () => {
    installed = await installPackedDaguerre();
    service = await startTestService({ credits: 100, env: { RATE_LIMIT_MAX: '1000' } });
    emptyFolder = mkdtempSync(join(tmpdir(), 'daguerre-host-'));
  }, 900_000);
  afterAll(async () => {
    await service?.stop();
  });

  it('every entry works with the MCP SDK Client: tools/list and a capture of inline HTML to PNG', { timeout: 300_000 }, async () => {
    const entries = hostEntries(service);
    expect(entries.map((e) => `${e.host}/${e.name}/${e.entry.type}`)).toEqual([
      'claude-desktop/daguerre/stdio',
      'claude-code-http/daguerre/http',
      'claude-code-stdio/daguerre/stdio',
      'claude-code-project/daguerre/http',
      'claude-code-project/daguerre-stdio/stdio',
      'cursor/daguerre/http',
      'cursor/daguerre-stdio/stdio',
      'vscode/daguerre/http',
      'vscode/daguerre-stdio/stdio',
    ]);
    for (const { host, name, entry } of entries) {
      const label = `${host}/${name}`;
      const client = new Client({ name: label, version: '1.0.0' });
      const transport =
        entry.type === 'http'
          ? new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } })
          : // A host passes the entry's env over a few variables of its own; PATH finds the installed `daguerre`.
            new StdioClientTransport({
              command: entry.command,
              args: entry.args,
              env: { ...getDefaultEnvironment(), PATH: installed.path, ...entry.env },
              cwd: emptyFolder,
              stderr: 'pipe',
            });
      await client.connect(transport);
      try {
        expect(
          (await client.listTools()).tools.map((t) => t.name),
          label,
        ).toContain('capture');
        expectGreenPng(
          (await client.callTool({
            name: 'capture',
            arguments: { html: GREEN, viewportWidth: 200, viewportHeight: 120 },
          })) as CallToolResult,
          label,
        );
      } finally {
        await client.close();
      }
    }
  });

  it("every entry works with the MCP Inspector's CLI (--config <file> --server <name>)", { timeout: 600_000 }, async () => {
    for (const { host, name, entry } of hostEntries(service)) {
      const label = `${host}/${name}`;
      // The Inspector reads `mcpServers` (VS Code's `servers` are renamed; the entry itself is as the host resolved it).
      const file = join(mkdtempSync(join(tmpdir(), 'daguerre-inspector-config-')), 'mcp.json');
      writeFileSync(file, JSON.stringify({ mcpServers: { [name]: entry } }));
      const env = { PATH: installed.path };
      const base = ['--config', file, '--server', name];
      const list = await runInspector([...base, '--method', 'tools/list'], { env, cwd: emptyFolder });
      expect(list.code, `${label}: ${list.stderr}`).toBe(0);
      expect(
        (list.json as { tools: Array<{ name: string }> }).tools.map((t) => t.name),
        label,
      ).toContain('capture');
      const call = await runInspector(
        [
          ...base,
          '--method',
          'tools/call',
          '--tool-name',
          'capture',
          '--tool-arg',
          `html=${GREEN}`,
          'viewportWidth=200',
          'viewportHeight=120',
        ],
        { env, cwd: emptyFolder },
      );
      expect(call.code, `${label}: ${call.stderr}`).toBe(0);
      expectGreenPng(call.json as CallToolResult, label);
    }
  });
});

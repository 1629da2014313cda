import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The MCP Inspector's CLI (devDependency @modelcontextprotocol/inspector 2.x), as a user runs it:
 * it needs Node 22.19 or later, so it runs on the Node 24 that scripts/node-line.sh provides. Its
 * HOME is a folder of its own (it keeps a catalog and OAuth state there) and its secrets stay in memory.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LAUNCHER = join(ROOT, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
let node: string | undefined;

export function inspectorNode(): string {
  node ??= execFileSync('bash', [join(ROOT, 'scripts/node-line.sh'), '24'], { encoding: 'utf8' }).trim();
  return node;
}

export interface InspectorRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as the JSON the CLI prints (a result, or {error}). */
  json: unknown;
}

export function runInspector(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<InspectorRun> {
  const home = mkdtempSync(join(tmpdir(), 'daguerre-inspector-'));
  return new Promise((resolve) => {
    execFile(
      inspectorNode(),
      [LAUNCHER, '--cli', ...args],
      {
        env: { ...process.env, ...options.env, HOME: home, MCP_INSPECTOR_SECRET_STORE: 'memory' },
        ...(options.cwd ? { cwd: options.cwd } : {}),
        timeout: options.timeoutMs ?? 90_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr, json });
      },
    );
  });
}

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { builtinModules } from 'node:module';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPngAndPdf } from '../helpers/service-checks.js';
import {
  installPackedDaguerre,
  packedTarballs,
  testedNodeLine,
  type InstalledDaguerre,
  type Tarballs,
} from '../helpers/installed-package.js';

const run = promisify(execFile);
const line = testedNodeLine();

/** Entries a tarball may hold: the bundle, the command, its data files and the package's own papers. */
const SHIPPED =
  /^package\/(bin\/[^/]+|dist\/.+|filter-lists\/[^/]+|filter-lists\/prepared\/(ads|cookies)-[0-9a-f]{24}\.bin|public\/dashboard\/[^/]+|workers\/[^/]+\.mjs|package\.json|openapi\.json|README\.md|LICENSE|CHANGELOG\.md)$/;
const CLIENT_SHIPPED = /^package\/(dist\/[^/]+|package\.json|README\.md|LICENSE|CHANGELOG\.md)$/;

async function tarballEntries(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tzf', tarball]);
  return stdout.split('\n').filter(Boolean);
}

/** The modules a bundled file imports: static `from '…'`, bare `import '…'` and `import('…')`. */
function importsOf(code: string): string[] {
  const found = new Set<string>();
  for (const pattern of [/\bfrom\s*["']([^"']+)["']/g, /\bimport\s*["']([^"']+)["']/g, /\bimport\(\s*["']([^"']+)["']\s*\)/g]) {
    for (const match of code.matchAll(pattern)) found.add(match[1]!);
  }
  // The patterns also meet markup in the bundle's templates (`name="from" type=`): a module
  // specifier never holds white space, `<`, `>`, `=` or `,`.
  return [...found].filter((specifier) => !/[\s<>=,]/.test(specifier));
}

const packageName = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

describe(`the packed packages installed from their tarballs alone on Node ${line}`, () => {
  let installed: InstalledDaguerre;
  let tarballs: Tarballs;
  let work: string;
  let env: NodeJS.ProcessEnv;
  let service: ChildProcess | undefined;
  let serviceUrl: string;
  let apiKey: string;

  /** `daguerre …` as a user types it in an empty folder, with nothing of the checkout on PATH. */
  const daguerre = async (args: string[], cwd = work) => {
    const { stdout } = await run(join(installed.binDir, 'daguerre'), args, { cwd, env, timeout: 60_000 });
    return stdout;
  };

  beforeAll(async () => {
    tarballs = await packedTarballs();
    installed = await installPackedDaguerre(line);
    work = await mkdtemp(join(tmpdir(), 'daguerre-installed-'));
    await mkdir(join(work, 'home'));
    // A user's shell: the installed bin first, none of the test runner's settings (DATABASE_URL, REDIS_URL, …).
    const trust = Object.fromEntries(
      Object.entries(process.env).filter(([name]) =>
        /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|https?_proxy|HTTPS?_PROXY|NO_PROXY|no_proxy)$/.test(name),
      ),
    );
    env = { ...trust, PATH: installed.path, HOME: join(work, 'home'), LANG: 'C.UTF-8', LOG_LEVEL: 'warn' };
    if (installed.installSeconds > 0)
      console.log(`npm install -g of the server tarball on Node ${line}: ${installed.installSeconds.toFixed(1)} s`);
  }, 900_000);

  afterAll(async () => {
    if (service && service.exitCode === null) {
      const exited = new Promise((done) => service!.once('exit', done));
      service.kill('SIGTERM');
      await exited;
    }
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('ships the bundle and its data files only, and every import resolves inside the package or to a declared dependency', async () => {
    const entries = await tarballEntries(tarballs.server);
    expect(entries.filter((entry) => !SHIPPED.test(entry))).toEqual([]);
    expect(entries.some((entry) => /\.ts$|\/tests?\/|fixtures/.test(entry))).toBe(false);
    expect(entries).toContain('package/dist/cli.js');
    // The filter engines, prepared when packed (server/scripts/prepack.mjs): loaded at start, never parsed.
    expect(entries.filter((entry) => entry.startsWith('package/filter-lists/prepared/'))).toHaveLength(2);
    expect((await tarballEntries(tarballs.client)).filter((entry) => !CLIENT_SHIPPED.test(entry))).toEqual([]);

    const manifest = JSON.parse(await readFile(join(installed.packageDir, 'package.json'), 'utf8')) as {
      name: string;
      bin: Record<string, string>;
      dependencies: Record<string, string>;
      engines: { node: string };
      main?: string;
      types?: string;
    };
    expect(manifest.name).toBe('daguerre');
    expect(manifest.main).toBeUndefined();
    expect(manifest.types).toBeUndefined();
    for (const file of Object.values(manifest.bin)) expect(statSync(join(installed.packageDir, file)).mode & 0o111).not.toBe(0);
    expect(manifest.engines.node).toMatch(line === 24 ? />=24/ : new RegExp(`\\^${line}\\.`));

    const dist = join(installed.packageDir, 'dist');
    const workers = join(installed.packageDir, 'workers');
    const outside: string[] = [];
    // The bundle, and the worker threads' files (plain JavaScript, loaded by path: services/schema-checker.ts).
    const files = [
      ...(await readdir(dist)).filter((name) => name.endsWith('.js')).map((name) => join(dist, name)),
      ...(await readdir(workers)).map((name) => join(workers, name)),
    ];
    for (const path of files) {
      const file = path.slice(installed.packageDir.length + 1);
      for (const specifier of importsOf(await readFile(path, 'utf8'))) {
        if (specifier.startsWith('.')) {
          const target = resolve(dist, specifier);
          if (!target.startsWith(`${dist}/`) || !existsSync(target)) outside.push(`${file}: ${specifier}`);
        } else if (
          !specifier.startsWith('node:') &&
          !builtinModules.includes(specifier) &&
          !(packageName(specifier) in manifest.dependencies)
        ) {
          outside.push(`${file}: ${specifier}`);
        }
      }
    }
    expect(outside).toEqual([]);
    // Node 22 and later run better-sqlite3 13 (server/src/store/sqlite-driver.ts); npm leaves it out on Node 20.
    const driver = await run(installed.node, ['-p', "require('better-sqlite3-node22/package.json').version"], {
      cwd: installed.packageDir,
      env,
    }).then(
      ({ stdout }) => stdout.trim(),
      () => 'absent',
    );
    expect(driver).toMatch(line >= 22 ? /^13\./ : /^absent$/);
    // The self-reference users and tools resolve.
    const { stdout } = await run(installed.node, ['-p', "require.resolve('daguerre/package.json')"], { cwd: installed.packageDir, env });
    expect(stdout.trim()).toBe(join(installed.packageDir, 'package.json'));
  });

  it('runs the CLI from an empty folder: migrate, org create, key create, serve on the embedded database, a PNG and a PDF', async () => {
    expect((await daguerre(['--version'])).trim()).toBe(
      JSON.parse(await readFile(join(installed.packageDir, 'package.json'), 'utf8')).version,
    );
    expect(JSON.parse(await daguerre(['migrate', '--json']))).toEqual({ migrated: true });
    const org = JSON.parse(await daguerre(['org', 'create', '--name', 'Acme', '--json'])) as { id: string };
    const key = JSON.parse(await daguerre(['key', 'create', '--org', org.id, '--name', 'installed', '--json'])) as { key: string };
    apiKey = key.key;
    expect(existsSync(join(work, 'data'))).toBe(true);

    const started = Date.now();
    service = spawn(join(installed.binDir, 'daguerre'), ['serve'], {
      cwd: work,
      // info: the filter engines say where they came from.
      env: { ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    service.stderr!.on('data', (chunk: Buffer) => (output += String(chunk)));
    serviceUrl = await new Promise<string>((found, fail) => {
      service!.stdout!.on('data', (chunk: Buffer) => {
        output += String(chunk);
        const match = /listening on (http:\/\/\S+)/.exec(output);
        if (match) found(match[1]!);
      });
      service!.once('exit', (code) => fail(new Error(`daguerre serve exited (${code}):\n${output}`)));
    });
    const ready = await fetch(`${serviceUrl}/ready`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: { sandbox: { mode: string } } }).checks.sandbox.mode).toBe('on');
    const listeningMs = Date.now() - started;

    await expectPngAndPdf(serviceUrl, apiKey, 400);
    const firstCaptureMs = Date.now() - started;
    // Both engines came from the package's prepared files (read before any cache), not from parsing the lists.
    await expect
      .poll(() => [...output.matchAll(/"engine":"(\w+)","source":"(\w+)"/g)].map((m) => `${m[1]} ${m[2]}`).sort(), { timeout: 15_000 })
      .toEqual(['ads prepared', 'cookies prepared']);
    // openaiSchema is compiled in a worker thread from the package's workers/ folder: its RE2 engine names a pattern it cannot run.
    const schema = JSON.stringify({ type: 'object', properties: { a: { type: 'string', pattern: '(?=a)a' } } });
    const refused = await fetch(
      `${serviceUrl}/capture?${new URLSearchParams({ html: '<p>x</p>', openaiPrompt: 'a?', openaiSchema: schema })}`,
      {
        headers: { 'x-api-key': apiKey, 'x-openai-api-key': 'sk-installed-package-test-key' },
      },
    );
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('RE2');

    // The faces that read files of the package: the OpenAPI document, Swagger UI, the dashboard's assets.
    const openapi = (await (await fetch(`${serviceUrl}/openapi.json`)).json()) as { info: { version: string } };
    expect(openapi.info.version).toBe(JSON.parse(await readFile(join(installed.packageDir, 'package.json'), 'utf8')).version);
    expect((await fetch(`${serviceUrl}/docs/`)).status).toBe(200);
    expect((await fetch(`${serviceUrl}/dashboard/assets/dashboard.css`)).status).toBe(200);
    console.log(`Node ${line}: daguerre serve listening after ${listeningMs} ms, first capture answered after ${firstCaptureMs} ms`);
  }, 120_000);

  it('the client from its tarball captures against the installed server (ESM and CommonJS)', async () => {
    const project = join(work, 'client-project');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'uses-client', private: true, type: 'module' }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', tarballs.client], {
      cwd: project,
      // The user's own npm settings (the registry, its certificate authority) and cache.
      env: { ...env, HOME: process.env.HOME, npm_config_update_notifier: 'false' },
      timeout: 300_000,
    });
    await writeFile(
      join(project, 'esm.js'),
      `import { createClient } from '@daguerre/client';
const client = createClient({ baseUrl: process.env.URL, apiKey: process.env.KEY });
const shot = await client.capture({ html: '<p>client</p>', viewportWidth: 300, viewportHeight: 200, format: 'jpeg' });
const usage = await client.usage();
console.log(JSON.stringify({ type: shot.contentType, bytes: shot.bytes.length, used: usage.credits.usedThisPeriod }));`,
    );
    await writeFile(
      join(project, 'cjs.cjs'),
      `const { createClient, DaguerreError } = require('@daguerre/client');\nconsole.log(typeof createClient, typeof DaguerreError);`,
    );
    const { stdout } = await run(installed.node, ['esm.js'], { cwd: project, env: { ...env, URL: serviceUrl, KEY: apiKey } });
    const result = JSON.parse(stdout) as { type: string; bytes: number; used: number };
    expect(result.type).toBe('image/jpeg');
    expect(result.bytes).toBeGreaterThan(100);
    expect(result.used).toBe(3);
    expect((await run(installed.node, ['cjs.cjs'], { cwd: project, env })).stdout.trim()).toBe('function function');
  }, 300_000);

  it('serves MCP over stdio from another folder: `daguerre mcp` as an MCP host launches it', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'daguerre-mcp-host-'));
    const transport = new StdioClientTransport({
      command: 'daguerre',
      args: ['mcp'],
      cwd: elsewhere,
      // A host passes its own small environment plus what the configuration names (docs/mcp.md).
      env: { ...getDefaultEnvironment(), PATH: installed.path, DAGUERRE_URL: serviceUrl, DAGUERRE_API_KEY: apiKey },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'installed-package-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['capture', 'usage']));
      const result = (await client.callTool({
        name: 'capture',
        arguments: { html: '<h1>From an MCP host</h1>', viewportWidth: 320, viewportHeight: 200 },
      })) as {
        isError?: boolean;
        content: Array<{ type: string; mimeType?: string; data?: string }>;
      };
      expect(result.isError).toBeFalsy();
      const image = result.content.find((item) => item.type === 'image');
      expect(image?.mimeType).toBe('image/png');
      expect(Buffer.from(image!.data!, 'base64').readUInt32BE(16)).toBe(320);
    } finally {
      await client.close();
      await rm(elsewhere, { recursive: true, force: true });
    }
  }, 120_000);
});

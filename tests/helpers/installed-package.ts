import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, withLockFolder, withPackLock } from './temp-project.js';

const run = promisify(execFile);

/** The Node lines the packages are tested on (engines in server/package.json; README "Install"). */
export type NodeLine = 20 | 22 | 24;

/** The line the suite installs on; .ci/run repeats the package tests on the others (DAGUERRE_TEST_NODE_LINE). */
export function testedNodeLine(): NodeLine {
  const line = Number(process.env.DAGUERRE_TEST_NODE_LINE ?? 24);
  if (line !== 20 && line !== 22 && line !== 24)
    throw new Error(`DAGUERRE_TEST_NODE_LINE must be 20, 22 or 24, not ${process.env.DAGUERRE_TEST_NODE_LINE}`);
  return line;
}

/** A Node binary of the line: the machine's own when it is of that line, else the registry's (scripts/node-line.sh). */
export async function nodeOfLine(line: NodeLine): Promise<string> {
  if (Number(process.versions.node.split('.')[0]) === line) return process.execPath;
  const { stdout } = await run('bash', [join(REPO_ROOT, 'scripts', 'node-line.sh'), String(line)], { timeout: 300_000 });
  return stdout.trim();
}

export interface Tarballs {
  server: string;
  client: string;
}

let packing: Promise<Tarballs> | undefined;

/** `npm pack` of the two published packages (each builds itself in its prepack), once per test process. */
export function packedTarballs(): Promise<Tarballs> {
  packing ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'daguerre-packs-'));
    await withPackLock(() =>
      run('npm', ['pack', '--silent', '--pack-destination', dir, '-w', 'server', '-w', 'client'], { cwd: REPO_ROOT, timeout: 300_000 }),
    );
    const files = await readdir(dir);
    const find = (pattern: RegExp) => {
      const name = files.find((file) => pattern.test(file));
      if (!name) throw new Error(`npm pack made no ${pattern} in ${dir}: ${files.join(', ')}`);
      return join(dir, name);
    };
    // The scoped client packs as daguerre-client-<version>.tgz.
    return { server: find(/^daguerre-\d.*\.tgz$/), client: find(/^daguerre-client-\d.*\.tgz$/) };
  })();
  return packing;
}

/** What a user's shell has after `npm install -g daguerre` on a Node line. */
export interface InstalledDaguerre {
  /** The global prefix's bin folder: `daguerre`, and `node` of the line beside it. */
  binDir: string;
  /** The line's Node binary. */
  node: string;
  /** PATH with binDir first, so `daguerre` and `node` are the installed ones. */
  path: string;
  /** Where npm put the package (…/lib/node_modules/daguerre). */
  packageDir: string;
  /** Seconds `npm install -g` took, or 0 when this exact tarball was installed on this line before. */
  installSeconds: number;
}

const CACHE_ROOT = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'daguerre');
const CACHE = join(CACHE_ROOT, 'installed');
/**
 * better-sqlite3 compiled once per Node line, as the prebuilt archive its install script
 * (prebuild-install) looks for in a local folder before downloading one: a user's machine downloads
 * it from GitHub, unreachable here, so without this every install compiled it again (about two
 * minutes on two busy cores) whenever the tarball changed.
 */
const PREBUILDS = join(CACHE_ROOT, 'prebuilds');

/**
 * The packed server installed globally (`npm install -g <tarball>`, from the tarball and the registry
 * alone) into a prefix of its own, on the given Node line. An install compiles better-sqlite3 (about
 * a minute), so it is kept in a cache keyed by the tarball's bytes and the line: test files share it
 * and a rerun on an unchanged tree reuses it.
 */
export async function installPackedDaguerre(line: NodeLine = testedNodeLine()): Promise<InstalledDaguerre> {
  const { server } = await packedTarballs();
  const node = await nodeOfLine(line);
  const nodeDir = dirname(node);
  const hash = createHash('sha256')
    .update(await readFile(server))
    .digest('hex')
    .slice(0, 16);
  const prefix = join(CACHE, `node${line}-${hash}`);
  const binDir = join(prefix, 'bin');
  // Nothing of the checkout (its node_modules/.bin holds a `daguerre` too) on the user's PATH.
  const machinePath = (process.env.PATH ?? '/usr/bin:/bin')
    .split(':')
    .filter((entry) => !entry.startsWith(REPO_ROOT.replace(/\/$/, '')))
    .join(':');
  const result = (installSeconds: number): InstalledDaguerre => ({
    binDir,
    node,
    path: `${binDir}:${nodeDir}:${machinePath}`,
    packageDir: join(prefix, 'lib', 'node_modules', 'daguerre'),
    installSeconds,
  });
  if (existsSync(join(prefix, '.complete'))) return result(0);

  await mkdir(CACHE, { recursive: true });
  // Parallel callers wait for one install; a lock left by a killed run is older than any install takes.
  return withLockFolder(`${prefix}.lock`, 15 * 60_000, async () => {
    if (existsSync(join(prefix, '.complete'))) return result(0);
    const work = `${prefix}.partial`;
    await rm(work, { recursive: true, force: true });
    const started = Date.now();
    await run('npm', ['install', '--global', '--prefix', work, '--no-audit', '--no-fund', '--loglevel=error', server], {
      cwd: tmpdir(),
      timeout: 600_000,
      env: {
        ...process.env,
        // npm (a script run by `node`) and node-gyp then build better-sqlite3 for this line; the
        // registry's Node package carries the headers node-gyp would otherwise download.
        PATH: `${nodeDir}:${process.env.PATH ?? '/usr/bin:/bin'}`,
        ...(node === process.execPath ? {} : { npm_config_nodedir: dirname(nodeDir) }),
        JOBS: 'max',
        npm_config_better_sqlite3_local_prebuilds: PREBUILDS,
        npm_config_update_notifier: 'false',
      },
    }).catch((error: { stderr?: string; message: string }) => {
      throw new Error(`npm install -g of the packed server on Node ${line} failed: ${error.stderr || error.message}`);
    });
    const seconds = (Date.now() - started) / 1000;
    // `node` of the line beside `daguerre`, as a Node installer would put it: the bin's
    // `#!/usr/bin/env node` then runs on this line from any shell with binDir first in PATH.
    if (node !== process.execPath) await symlink(node, join(work, 'bin', 'node'));
    await keepPrebuild(node, join(work, 'lib', 'node_modules', 'daguerre', 'node_modules', 'better-sqlite3'));
    await rm(prefix, { recursive: true, force: true });
    await rename(work, prefix);
    await mkdir(join(prefix, '.complete'));
    await pruneOtherInstalls(line, prefix);
    return result(seconds);
  });
}

/** The compiled addon as prebuild-install's archive (`<name>-v<version>-node-v<abi>-linux-x64.tar.gz`), kept for the next install. */
async function keepPrebuild(node: string, moduleDir: string): Promise<void> {
  const { version } = JSON.parse(await readFile(join(moduleDir, 'package.json'), 'utf8')) as { version: string };
  const abi = (await run(node, ['-p', 'process.versions.modules'])).stdout.trim();
  const archive = join(PREBUILDS, `better-sqlite3-v${version}-node-v${abi}-${process.platform}-${process.arch}.tar.gz`);
  if (existsSync(archive)) return;
  await mkdir(PREBUILDS, { recursive: true });
  await run('tar', ['-czf', `${archive}.partial`, '-C', moduleDir, 'build/Release/better_sqlite3.node']);
  await rename(`${archive}.partial`, archive);
}

/** Installs of older tarballs on the same line: one kept per line is enough. */
async function pruneOtherInstalls(line: NodeLine, keep: string): Promise<void> {
  for (const name of await readdir(CACHE)) {
    const path = join(CACHE, name);
    if (path === keep || !name.startsWith(`node${line}-`) || name.endsWith('.lock')) continue;
    if (existsSync(`${path.replace(/\.partial$/, '')}.lock`)) continue;
    await rm(path, { recursive: true, force: true });
  }
}

/**
 * Runs the Daguerre service as a child process for the benchmark and talks to it over HTTP on
 * 127.0.0.1.
 *
 * Interface used: `node server/bin/daguerre.js serve` with PORT, HOST, DATABASE_URL, … in the
 * environment; it prints a line containing `listening` when ready and, on an empty database, the
 * demo API key (rs_ + 43 base64url characters). When no key shows up, one is made with the CLI:
 * `org create --name bench --credits N --json` → { id }, `key create --org <id> --name bench --json` → { key }.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findString, parseJsonOutput } from './cli-output.js';
import { processTree, stillRunning, type ProcInfo } from './proc-mem.js';
import { nowMs, sleep } from './stats.js';

export const API_KEY_PATTERN = /rs_[A-Za-z0-9_-]{43}/;

export interface ServiceOptions {
  repoRoot: string;
  /** The CLI entry point, relative to repoRoot or absolute (default server/bin/daguerre.js). */
  bin?: string;
  /** Directory for the SQLite database. */
  dataDir: string;
  credits: number;
  readyTimeoutMs?: number;
  /** Settings of this service on top of the bench's own (e.g. a longer CAPTURE_TIMEOUT_MS). */
  env?: Record<string, string>;
  /** Called with every output line (for --verbose style logging). */
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
}

export interface ServiceHandle {
  pid: number;
  origin: string;
  apiKey: string;
  keySource: 'demo key file' | 'CLI';
  /** A key of a new organization with `credits`, made with the CLI on the service's database. */
  createKey(credits: number, organizationName: string): Promise<string>;
  /** The last lines of output, for error messages. */
  outputTail(): string;
  /** Pids of descendants that were still alive after the service exited and had to be killed. */
  stop(): Promise<{ exitedGracefully: boolean; leftovers: ProcInfo[] }>;
}

import { freePort } from './free-port.js';

export { freePort };

export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function serviceEnv(port: number, dataDir: string, credits: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${join(dataDir, 'bench.db')}`,
    ALLOW_PRIVATE_NETWORK: 'true',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '1000000',
    DEMO_CREDITS: String(credits),
    // Beside the bench's own database, never the checkout's data folder.
    DEMO_KEY_FILE: join(dataDir, 'demo-api-key.txt'),
  };
  // The service's default concurrency is what is measured, unless BENCH_MAX_CONCURRENCY asks for another.
  delete env.MAX_CONCURRENCY;
  if (process.env.BENCH_MAX_CONCURRENCY) env.MAX_CONCURRENCY = process.env.BENCH_MAX_CONCURRENCY;
  return env;
}

export const DEFAULT_BIN = 'server/bin/daguerre.js';

function runCli(repoRoot: string, bin: string, env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bin, ...args], { cwd: repoRoot, env, timeout: 60_000, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`daguerre ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

export async function createKeyWithCli(
  repoRoot: string,
  bin: string,
  env: NodeJS.ProcessEnv,
  credits: number,
  name = 'bench',
): Promise<string> {
  const org = parseJsonOutput(await runCli(repoRoot, bin, env, ['org', 'create', '--name', name, '--credits', String(credits), '--json']));
  const orgId = findString(org, 'id');
  if (!orgId) throw new Error(`org create printed no id: ${JSON.stringify(org)}`);
  const keyOut = await runCli(repoRoot, bin, env, ['key', 'create', '--org', orgId, '--name', 'bench', '--json']);
  const parsed = parseJsonOutput(keyOut);
  const key = findString(parsed, 'key') ?? API_KEY_PATTERN.exec(keyOut)?.[0];
  if (!key) throw new Error(`key create printed no key: ${keyOut.slice(0, 500)}`);
  return key;
}

function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(false);
    }, timeoutMs);
    const onExit = () => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once('exit', onExit);
  });
}

/**
 * Stops a child and its process tree: SIGTERM, up to 10 s to exit, then SIGKILL; descendants still
 * alive 5 s later (Chromium after a SIGKILL: same pid and same start time) are killed. Returns
 * whether it exited on SIGTERM and the descendants that had to be killed.
 */
export async function stopChildTree(
  child: ChildProcess,
  pid: number | undefined,
): Promise<{ exitedGracefully: boolean; leftovers: ProcInfo[] }> {
  const tree = pid !== undefined ? processTree(pid).filter((p) => p.pid !== pid) : [];
  let exitedGracefully = true;
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    exitedGracefully = await waitExit(child, 10_000);
    if (!exitedGracefully) {
      child.kill('SIGKILL');
      await waitExit(child, 5_000);
    }
  }
  // Chromium's helpers exit a moment after the browser process, so give them up to 5 s.
  let leftovers = tree.filter(stillRunning);
  for (let i = 0; i < 50 && leftovers.length > 0; i++) {
    await sleep(100);
    leftovers = leftovers.filter(stillRunning);
  }
  killAll(leftovers);
  return { exitedGracefully, leftovers };
}

/** SIGKILL to each of `processes` (one already gone is skipped). */
export function killAll(processes: readonly ProcInfo[]): void {
  for (const p of processes) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

export async function startService(options: ServiceOptions): Promise<ServiceHandle> {
  const port = await freePort();
  const env = { ...serviceEnv(port, options.dataDir, options.credits), ...options.env };
  const bin = options.bin ?? DEFAULT_BIN;
  const child = spawn(process.execPath, [bin, 'serve'], {
    cwd: options.repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  const tail: string[] = [];
  let listening = false;
  let exited: string | undefined;
  let spawnError: Error | undefined;

  const onData = (stream: 'stdout' | 'stderr') => {
    let partial = '';
    return (chunk: Buffer) => {
      const text = partial + chunk.toString('utf8');
      const lines = text.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (/listening/i.test(line)) listening = true;
        tail.push(`[${stream}] ${line}`);
        if (tail.length > 200) tail.shift();
        options.onLine?.(stream, line);
      }
    };
  };
  child.stdout?.on('data', onData('stdout'));
  child.stderr?.on('data', onData('stderr'));
  child.once('error', (e) => {
    spawnError = e;
  });
  child.once('exit', (code, signal) => {
    exited = `exit code ${code ?? 'none'}, signal ${signal ?? 'none'}`;
  });

  const outputTail = () => tail.slice(-40).join('\n');

  const stop = () => stopChildTree(child, pid);

  try {
    if (pid === undefined) throw new Error(`could not start the service: ${spawnError?.message ?? 'no pid'}`);
    const timeoutMs = options.readyTimeoutMs ?? 60_000;
    const start = nowMs();
    let portReady = false;
    // Bounded: ends at the deadline at the latest.
    while (!listening && nowMs() - start < timeoutMs) {
      if (exited || spawnError) throw new Error(`the service stopped before listening (${exited ?? spawnError?.message})\n${outputTail()}`);
      await sleep(100);
      if (!portReady && nowMs() - start > 1_000) portReady = await portOpen(port);
      if (portReady) break;
    }
    if (!listening && !portReady) throw new Error(`the service did not print "listening" within ${timeoutMs} ms\n${outputTail()}`);
    // The demo key line may come just after the listening line.
    // The demo key is written to DEMO_KEY_FILE, just after the listening line.
    const keyFile = env.DEMO_KEY_FILE!;
    const readKeyFile = () =>
      readFile(keyFile, 'utf8').then(
        (text) => API_KEY_PATTERN.exec(text)?.[0],
        () => undefined,
      );
    let demo = await readKeyFile();
    for (let i = 0; i < 20 && !demo; i++) {
      await sleep(100);
      demo = await readKeyFile();
    }
    let apiKey: string;
    let keySource: ServiceHandle['keySource'];
    if (demo) {
      apiKey = demo;
      keySource = 'demo key file';
    } else {
      apiKey = await createKeyWithCli(options.repoRoot, bin, env, options.credits);
      keySource = 'CLI';
    }
    const createKey = (credits: number, organizationName: string) =>
      createKeyWithCli(options.repoRoot, bin, env, credits, organizationName);
    return { pid, origin: `http://127.0.0.1:${port}`, apiKey, keySource, createKey, outputTail, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

export interface HttpResult {
  status: number;
  ms: number;
  body: Uint8Array;
  contentType: string;
  /** The Server-Timing header ('' when absent): where the service says the time went. */
  serverTiming: string;
  error?: string;
}

/** GET with a time limit; a network error is reported as status 0. */
export async function timedGet(url: string, timeoutMs = 120_000, headers?: Record<string, string>): Promise<HttpResult> {
  const start = nowMs();
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers });
    const body = new Uint8Array(await res.arrayBuffer());
    return {
      status: res.status,
      ms: nowMs() - start,
      body,
      contentType: res.headers.get('content-type') ?? '',
      serverTiming: res.headers.get('server-timing') ?? '',
    };
  } catch (e) {
    return {
      status: 0,
      ms: nowMs() - start,
      body: new Uint8Array(),
      contentType: '',
      serverTiming: '',
      error: e instanceof Error ? e.message : String(e),
    };
  }
}

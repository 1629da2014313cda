import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HostNetwork } from './netns.js';
import { PrivateMariaDb } from './private-mariadb.js';
import { alive, descendantsOf } from './process-tree.js';
import { until } from './until.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'server/bin/daguerre.js');

/** Redis, MariaDB and an S3 server (s3rver), each a process of its own on the data host's address. */
export interface DataHost {
  redisUrl: string;
  /** root URL of the MariaDB server (no database). */
  mariadbUrl: string;
  s3: { endpoint: string; bucket: string; accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
}

function waitForLine(child: ChildProcess, pattern: RegExp, what: string, timeoutMs: number): Promise<void> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += String(chunk);
      if (pattern.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += String(chunk)));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before it started:\n${output}`));
    });
  });
}

function exitOf(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts the shared stores on `hostName`: a private redis-server, a private mariadbd and s3rver. */
export async function startDataHost(net: HostNetwork, hostName: string): Promise<DataHost> {
  const { address, namespace } = net.host(hostName);
  const redis = net.spawn(
    hostName,
    'redis-server',
    ['--port', '6379', '--bind', address, '--save', '', '--appendonly', 'no', '--protected-mode', 'no'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const redisReady = waitForLine(redis, /Ready to accept connections/, 'redis-server', 30_000);

  const mariadb = new PrivateMariaDb({ bindAddress: address, port: 3306, launch: ['ip', 'netns', 'exec', namespace] });
  const s3Directory = mkdtempSync(join(tmpdir(), 'daguerre-s3-host-'));
  const s3 = {
    endpoint: `http://${address}:9000`,
    bucket: 'results',
    accessKeyId: `key-${randomBytes(4).toString('hex')}`,
    secretAccessKey: randomBytes(12).toString('hex'),
  };
  const s3rver = net.spawn(
    hostName,
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'tests/helpers/s3rver-host.ts'),
      address,
      '9000',
      s3Directory,
      s3.bucket,
      s3.accessKeyId,
      s3.secretAccessKey,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const s3Ready = waitForLine(s3rver, /^ready$/m, 's3rver', 60_000);
  const stop = async () => {
    for (const child of [redis, s3rver]) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all([exitOf(redis), exitOf(s3rver)]);
    await mariadb.destroy();
    rmSync(s3Directory, { recursive: true, force: true });
  };
  try {
    await mariadb.init();
    await Promise.all([redisReady, s3Ready, mariadb.start()]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { redisUrl: `redis://${address}:6379`, mariadbUrl: mariadb.rootUrl, s3, stop };
}

/** A `daguerre serve` or `daguerre worker` process on a simulated host. */
export interface RenderHost {
  host: string;
  role: 'serve' | 'worker';
  url: string;
  pid: number;
  child: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  output(): string;
  /** SIGKILL of the process only (Chromium must die by itself: that is what the tests check). */
  kill(): Promise<void>;
  /** SIGTERM: the graceful stop a scale-down sends. */
  terminate(): Promise<void>;
  /** Processes it had started (Chromium's) that are still alive. */
  leftovers(): number[];
  /** SIGKILL of those: cleanup after a failed check. */
  reapLeftovers(): void;
}

/** Starts `daguerre <role>` on a host; resolves once /ready answers 200 (Chromium warm, database reachable). */
export async function startDaguerre(
  net: HostNetwork,
  hostName: string,
  role: 'serve' | 'worker',
  env: Record<string, string>,
  timeoutMs = 90_000,
): Promise<RenderHost> {
  const { address } = net.host(hostName);
  const port = role === 'serve' ? '3000' : '3001';
  const child = net.spawn(hostName, process.execPath, [BIN, role], {
    cwd: ROOT,
    env: { ...process.env, HOST: address, PORT: port, WORKER_PORT: port, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += String(chunk)));
  child.stderr!.on('data', (chunk: Buffer) => (output += String(chunk)));
  const exited = exitOf(child);
  const pid = child.pid!;
  // Recorded while it lives: after a SIGKILL its children re-parent away and cannot be found by tree.
  const started = new Set<number>();
  const record = () => {
    if (alive(pid)) descendantsOf(pid).forEach((p) => started.add(p.pid));
  };
  const recorder = setInterval(record, 200);
  void exited.then(() => clearInterval(recorder));
  const url = `http://${address}:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`daguerre ${role} on ${hostName} exited before it was ready:\n${output}`);
    const ready = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(5_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`daguerre ${role} on ${hostName} was not ready within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  record();
  return {
    host: hostName,
    role,
    url,
    pid,
    child,
    exited,
    output: () => output,
    kill: async () => {
      record();
      if (alive(pid)) process.kill(pid, 'SIGKILL');
      await exited;
    },
    terminate: async () => {
      record();
      if (alive(pid)) process.kill(pid, 'SIGTERM');
      await exited;
    },
    leftovers: () => [...started].filter((p) => alive(p)),
    reapLeftovers: () => {
      for (const p of started) if (alive(p)) process.kill(p, 'SIGKILL');
    },
  };
}

export { until };

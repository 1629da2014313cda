import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openDataLayer } from '../../server/src/runtime.js';
import { loadConfig } from '../../server/src/config.js';
import { alive, descendantsOf } from './process-tree.js';

const BIN = fileURLToPath(new URL('../../server/bin/daguerre.js', import.meta.url));

/** `daguerre serve` as a child process of the test, to be killed by its pid. */
export interface ChildService {
  url: string;
  pid: number;
  child: ChildProcess;
  /** SIGKILL of the service process only; returns once it is gone. Chromium's processes are left as they are. */
  kill(): Promise<void>;
  /** Kills, by pid, every process the service had started that is still alive (cleanup after a SIGKILL). */
  reapOrphans(): void;
  /** SIGTERM and wait: a graceful stop. */
  stop(): Promise<void>;
}

export async function spawnService(env: Record<string, string>, timeoutMs = 60_000): Promise<ChildService> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += String(chunk);
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += String(chunk)));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited (${code}) before listening:\n${output}`));
    });
  });
  const pid = child.pid!;
  // Everything it started, recorded while it lives (after a SIGKILL they re-parent away from it).
  const started = new Set<number>();
  const record = () => descendantsOf(pid).forEach((p) => started.add(p.pid));
  const recorder = setInterval(record, 250);
  record();
  child.once('exit', () => clearInterval(recorder));
  return {
    url,
    pid,
    child,
    kill: async () => {
      record();
      process.kill(pid, 'SIGKILL');
      await exited;
    },
    reapOrphans: () => {
      for (const orphan of started) if (alive(orphan)) process.kill(orphan, 'SIGKILL');
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** An organization with `credits` and a key, written straight into the database the child will use. */
export async function seedOrganization(databaseUrl: string, credits: number): Promise<{ organizationId: string; apiKey: string }> {
  const data = await openDataLayer(loadConfig({}, { DATABASE_URL: databaseUrl }));
  try {
    const plan = await data.accounts.createPlan({ name: `faults-${Date.now()}-${Math.random()}`, tier: 'test', creditsPerMonth: credits });
    const org = await data.accounts.createOrganization('Faults org', plan);
    const key = await data.apiKeys.create({ organizationId: org.id, name: 'faults' });
    return { organizationId: org.id, apiKey: key.key };
  } finally {
    await data.db.close();
  }
}

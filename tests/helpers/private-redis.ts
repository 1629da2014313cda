import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/bench/free-port.js';

/**
 * A Redis server of the test's own (`redis-server --port N`, no persistence), which the test kills
 * with SIGKILL by pid and starts again empty on the same port: the shared Redis is never touched.
 */
export class PrivateRedis {
  readonly dir = mkdtempSync(join(tmpdir(), 'daguerre-redis-'));
  port = 0;
  private server: ChildProcess | undefined;
  private exited: Promise<void> | undefined;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.server?.pid;
  }

  async start(): Promise<this> {
    this.port ||= await freePort();
    const server = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    this.server = server;
    this.exited = new Promise((resolve) => server.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 20_000);
      server.stdout!.on('data', (chunk: Buffer) => {
        output += String(chunk);
        if (/Ready to accept connections/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      });
      server.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}):\n${output}`));
      });
    });
    server.stdout!.resume();
    return this;
  }

  /** SIGKILL by pid: everything in it is lost (it keeps nothing on disk). */
  async kill(): Promise<void> {
    if (this.server?.pid && this.server.exitCode === null && this.server.signalCode === null) process.kill(this.server.pid, 'SIGKILL');
    await this.exited;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

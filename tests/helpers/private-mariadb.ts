import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { freePort } from '../../scripts/bench/free-port.js';

const run = promisify(execFile);

/**
 * A MariaDB server of the test's own (its own data directory, port and socket), which the test
 * may kill by pid and start again on the same data: the shared server is never touched.
 */
export class PrivateMariaDb {
  readonly dir = mkdtempSync(join(tmpdir(), 'daguerre-mariadb-'));
  port = 0;
  private server: ChildProcess | undefined;
  private exited: Promise<void> | undefined;

  /**
   * `bindAddress` and `port` place it elsewhere than a free loopback port; `launch` starts it through
   * another program, e.g. `['ip', 'netns', 'exec', <namespace>]` to run it on a simulated host.
   */
  constructor(private readonly placement: { bindAddress?: string; port?: number; launch?: string[] } = {}) {}

  get rootUrl(): string {
    return `mysql://root@${this.placement.bindAddress ?? '127.0.0.1'}:${this.port}`;
  }

  async init(): Promise<this> {
    await run(
      'mariadb-install-db',
      ['--no-defaults', `--datadir=${join(this.dir, 'data')}`, '--user=root', '--skip-test-db', '--auth-root-authentication-method=normal'],
      { timeout: 120_000 },
    );
    this.port = this.placement.port ?? (await freePort());
    return this;
  }

  async start(): Promise<void> {
    const [launcher, ...launcherArgs] = [...(this.placement.launch ?? []), 'mariadbd'];
    const server = spawn(
      launcher!,
      [
        ...launcherArgs,
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        `--port=${this.port}`,
        `--bind-address=${this.placement.bindAddress ?? '127.0.0.1'}`,
        `--socket=${join(this.dir, 'mysqld.sock')}`,
        `--pid-file=${join(this.dir, 'mysqld.pid')}`,
        `--log-error=${join(this.dir, 'error.log')}`,
        '--user=root',
        '--skip-grant-tables',
        // Nothing of the machine's beyond the data directory: without this, every new connection waits
        // for a reverse DNS lookup of the client's address through the machine's resolver (from a
        // network namespace, one that cannot reach it), and each commit below for an fsync queued
        // behind every other program's writes: on a busy machine either can outlast the service's
        // 5 s wait for a pooled connection. A commit still reaches the kernel before it answers, so a
        // SIGKILL of this server (what the tests do) loses nothing committed.
        '--skip-name-resolve',
        '--innodb-flush-log-at-trx-commit=2',
        '--innodb-buffer-pool-size=16M',
        '--innodb-log-file-size=8M',
      ],
      { stdio: 'ignore' },
    );
    this.server = server;
    this.exited = new Promise((resolve) => server.once('exit', () => resolve()));
    for (let i = 0; ; i++) {
      try {
        const connection = await mysql.createConnection(this.rootUrl);
        await connection.end();
        return;
      } catch (error) {
        if (i > 600 || server.exitCode !== null) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  async createDatabase(name: string): Promise<string> {
    const connection = await mysql.createConnection(this.rootUrl);
    await connection.query(`CREATE DATABASE IF NOT EXISTS \`${name}\``);
    await connection.end();
    return `${this.rootUrl}/${name}`;
  }

  /** SIGKILL of this server's pid only. */
  async kill(): Promise<void> {
    if (!this.server || this.server.exitCode !== null) return;
    process.kill(this.server.pid!, 'SIGKILL');
    await this.exited;
  }

  async destroy(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

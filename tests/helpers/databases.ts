import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';

export type DatabaseKind = 'sqlite' | 'mysql';
export const DATABASE_KINDS: DatabaseKind[] = ['sqlite', 'mysql'];

/** MariaDB of the developer machines and CI (root, no password). */
export const MYSQL_ROOT_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database per call: an SQLite file in a temp dir, or a new MariaDB database. */
export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'daguerre-test-'));
    return { url: `sqlite:${join(dir, 'test.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `rs_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const connection = await mysql.createConnection(MYSQL_ROOT_URL);
  await connection.query(`CREATE DATABASE \`${name}\``);
  await connection.end();
  return {
    url: `${MYSQL_ROOT_URL}/${name}`,
    drop: async () => {
      const c = await mysql.createConnection(MYSQL_ROOT_URL);
      await c.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await c.end();
    },
  };
}

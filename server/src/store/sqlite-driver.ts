import { createRequire } from 'node:module';
import type { Knex } from 'knex';

const require = createRequire(import.meta.url);

/**
 * better-sqlite3 for the Node line that runs: 13 on Node 22 and later, 12 on Node 20. Node 24.19
 * made a native object's destructor check for a JavaScript context, and better-sqlite3 before 13
 * frees its statements from the garbage collector, which may run outside one: the process aborts
 * ("Assertion failed: (env) != nullptr", WiseLibs/better-sqlite3 and nodejs/node issues). 13 fixes
 * that but does not run on Node 20. Both are dependencies of the server (13 an optional one, which
 * npm skips where it does not build); docs/install.md.
 */
export function betterSqlite3(): unknown {
  if (Number(process.versions.node.split('.')[0]) >= 22) {
    try {
      return require('better-sqlite3-node22');
    } catch {
      // Not installed (an optional dependency that did not build): 12 still works before Node 24.19.
    }
  }
  return require('better-sqlite3');
}

/** A better-sqlite3 connection, as far as the retry below reads it. */
interface SqliteConnection {
  inTransaction: boolean;
}

interface QueryObject {
  sql: string;
}

const BetterSqlite3Client = require('knex/lib/dialects/better-sqlite3/index.js') as typeof Knex.Client;
/** The driver's own query method (internal to knex, so not in its types), which the client below wraps. */
const driverQuery = (
  BetterSqlite3Client.prototype as unknown as { _query(connection: SqliteConnection, obj: QueryObject): Promise<unknown> }
)._query;
const SqliteTransaction = require('knex/lib/dialects/sqlite3/execution/sqlite-transaction.js') as new (
  client: Knex.Client,
  ...rest: unknown[]
) => {
  query(connection: SqliteConnection, sql: string): Promise<unknown>;
};

/**
 * How long a statement waits for another process's write lock in all: SQLite's own busy handler
 * (busy_timeout, database.ts) waits a short while each time, blocking the event loop; between its
 * tries the wait is asynchronous, so the process keeps answering meanwhile.
 */
const SQLITE_LOCK_WAIT_MS = 30_000;

const isBusy = (error: unknown) => /^SQLITE_BUSY/.test(String((error as { code?: unknown })?.code ?? ''));

/**
 * Write transactions take the write lock at BEGIN. knex's plain `BEGIN` is deferred: a transaction
 * that reads first (a job's success, a cancel, the migration lock) then needs the lock to write, and
 * when another process has written since its read SQLite fails that write with SQLITE_BUSY at once,
 * without waiting (waiting could not help: its snapshot is stale). `BEGIN IMMEDIATE` waits for the
 * lock first, so nothing in the transaction can fail for it. Every transaction of this service writes.
 */
class ImmediateTransaction extends SqliteTransaction {
  begin(connection: SqliteConnection): Promise<unknown> {
    return this.query(connection, 'BEGIN IMMEDIATE;');
  }
}

/**
 * knex's better-sqlite3 dialect, loading the driver above instead of `require('better-sqlite3')`,
 * for several processes on one database file (`serve` and `worker`s): immediate transactions, and
 * a statement that found the file locked is tried again until SQLITE_LOCK_WAIT_MS. That is safe
 * outside a transaction (a statement refused SQLITE_BUSY changed nothing; `BEGIN IMMEDIATE` itself
 * is one) and for a COMMIT, which SQLite leaves open to be retried; inside a transaction after its
 * BEGIN nothing else can meet the lock.
 */
export class SqliteClient extends BetterSqlite3Client {
  _driver(): unknown {
    return betterSqlite3();
  }

  override transaction(...args: unknown[]): Knex.Transaction {
    return new ImmediateTransaction(this, ...args) as unknown as Knex.Transaction;
  }

  async _query(connection: SqliteConnection, obj: QueryObject): Promise<unknown> {
    const deadline = Date.now() + SQLITE_LOCK_WAIT_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await driverQuery.call(this, connection, obj);
      } catch (error) {
        const retryable = !connection.inTransaction || /^\s*COMMIT\b/i.test(obj.sql);
        if (!isBusy(error) || !retryable || Date.now() >= deadline) throw error;
        // Up to 50 ms between tries, with jitter so that waiting processes do not retry in step.
        await new Promise((resolve) => setTimeout(resolve, Math.min(50, 2 ** attempt) * (0.5 + Math.random())));
      }
    }
  }
}

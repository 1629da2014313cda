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

const BetterSqlite3Client = require('knex/lib/dialects/better-sqlite3/index.js') as typeof Knex.Client;

/** knex's better-sqlite3 dialect, loading the driver above instead of `require('better-sqlite3')`. */
export class SqliteClient extends BetterSqlite3Client {
  _driver(): unknown {
    return betterSqlite3();
  }
}

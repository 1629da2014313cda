/**
 * What the request log costs (`npx tsx scripts/bench/request-log.ts`), on SQLite and on the
 * MariaDB at 127.0.0.1:3306, in a database of its own each:
 * - time: a capture that reserves credits writes its ledger row anyway (reserve, then commit or
 *   release), so the log adds columns to that row, not a statement; the time of that path per
 *   capture is measured as it runs in the service (CreditRepository.reserve + commit), and the one
 *   statement a refused capture adds (RequestLogRepository.recordRefusal);
 * - bytes: a day of one capture a second (86 400 rows with targets of realistic length, 5 %
 *   failures, 2 % refusals, 3 keys) is written, and the table's size measured (SQLite: pages of
 *   the file; MariaDB: data and index length after ANALYZE TABLE);
 * - reading: the first page of GET /captures (50 rows) over that day, all and filtered by key and
 *   status; and the sweep of the whole day past its retention.
 *
 * Environment: BENCH_LOG_TIMED=2000 captures timed through the real path (the rest are bulk-inserted).
 */
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { AccountsRepository } from '../../server/src/store/accounts-repository.js';
import { CreditRepository } from '../../server/src/store/credit-repository.js';
import { migrate, openDatabase, type Database } from '../../server/src/store/database.js';
import { RequestLogRepository } from '../../server/src/store/request-log-repository.js';
import { captureLogPage } from '../../server/src/services/request-log.js';
import { createTestDatabase, type DatabaseKind } from '../../tests/helpers/databases.js';
import { runWhenInvokedDirectly } from './standalone.js';
import { nowMs, percentile, round } from './stats.js';

const TIMED = Number(process.env.BENCH_LOG_TIMED ?? 2_000);
const DAY = 86_400;
const PATHS = [
  '/pricing',
  '/blog/2026/11/a-long-article-title-about-screenshots',
  '/docs/getting-started?lang=en',
  '/',
  '/products/42?ref=newsletter&token=[REDACTED]',
];

const target = (i: number) => `https://www.customer-site-${i % 300}.example.com${PATHS[i % PATHS.length]}`;

async function tableBytes(db: Database, file: string | undefined): Promise<number> {
  if (db.dialect === 'mysql') {
    await db.knex.raw('ANALYZE TABLE capture_ledger');
    const [rows] = (await db.knex.raw(
      "SELECT data_length + index_length AS bytes FROM information_schema.TABLES WHERE table_schema = DATABASE() AND table_name = 'capture_ledger'",
    )) as [{ bytes: number }[]];
    return Number(rows[0]!.bytes);
  }
  await db.knex.raw('PRAGMA wal_checkpoint(TRUNCATE)');
  return statSync(file!).size;
}

async function measureOn(kind: DatabaseKind): Promise<string[]> {
  const database = await createTestDatabase(kind);
  const db = openDatabase(database.url);
  const file = kind === 'sqlite' ? database.url.slice('sqlite:'.length) : undefined;
  try {
    await migrate(db);
    const accounts = new AccountsRepository(db);
    const organizationId = (
      await accounts.createOrganization('Bench', await accounts.createPlan({ name: 'bench', tier: 'bench', creditsPerMonth: 10_000_000 }))
    ).id;
    const keys = [randomUUID(), randomUUID(), randomUUID()];
    const credits = new CreditRepository(db);
    const log = new RequestLogRepository(db);
    const emptyBytes = await tableBytes(db, file);

    // The real path of a capture's row, timed.
    const perCapture: number[] = [];
    for (let i = 0; i < TIMED; i++) {
      const requestId = randomUUID();
      const started = nowMs();
      await credits.reserve(
        {
          requestId,
          organizationId,
          apiKeyId: keys[i % 3]!,
          format: 'png',
          source: 'url',
          targetHost: new URL(target(i)).host,
          userAgent: null,
          kind: 'sync',
          target: target(i),
        },
        1,
      );
      await credits.commit(requestId, { processingMs: 900 + (i % 500), fileSize: 80_000 + i });
      perCapture.push(nowMs() - started);
    }
    const perRefusal: number[] = [];
    for (let i = 0; i < 200; i++) {
      const started = nowMs();
      await log.recordRefusal({
        requestId: randomUUID(),
        organizationId,
        apiKeyId: keys[0]!,
        kind: 'sync',
        format: 'png',
        source: 'url',
        target: target(i),
        errorCode: 'VALIDATION_ERROR',
        httpStatus: 400,
        durationMs: 3,
        at: Date.now(),
      });
      perRefusal.push(nowMs() - started);
    }

    // The rest of the day, in bulk, with the same shape of rows.
    const dayStart = Date.now() - DAY * 1000;
    const rows = [];
    for (let i = TIMED + 200; i < DAY; i++) {
      const status = i % 50 === 0 ? 'refused' : i % 20 === 0 ? 'released' : 'charged';
      rows.push({
        request_id: randomUUID(),
        organization_id: organizationId,
        api_key_id: keys[i % 3],
        status,
        format: 'png',
        source: 'url',
        target_host: new URL(target(i)).host,
        target: target(i),
        credits: status === 'charged' ? 1 : 0,
        processing_ms: 900 + (i % 500),
        file_size: status === 'charged' ? 80_000 + i : null,
        error_code: status === 'charged' ? null : status === 'refused' ? 'VALIDATION_ERROR' : 'CAPTURE_TIMEOUT',
        http_status: status === 'charged' ? 200 : status === 'refused' ? 400 : 504,
        kind: 'sync',
        mode: 'sync',
        created_at: dayStart + i * 1000,
        finished_at: dayStart + i * 1000 + 900,
      });
    }
    await db.knex.batchInsert('capture_ledger', rows, 500);
    const dayBytes = (await tableBytes(db, file)) - emptyBytes;

    const read = async (filters: Record<string, string>) => {
      const times: number[] = [];
      for (let i = 0; i < 20; i++) {
        const started = nowMs();
        await captureLogPage(log, organizationId, { limit: 50, ...filters }, 30);
        times.push(nowMs() - started);
      }
      return round(percentile(times, 50), 2);
    };
    const firstPage = await read({});
    const byKey = await read({ keyId: keys[1]! });
    const failed = await read({ status: 'failed' });
    const sweepStarted = nowMs();
    let swept = 0;
    for (;;) {
      const deleted = await log.sweep(Date.now() + 1);
      swept += deleted;
      if (deleted === 0) break;
    }
    const sweepSeconds = (nowMs() - sweepStarted) / 1000;
    return [
      `| ${kind} | ${round(percentile(perCapture, 50), 2)} ms (p90 ${round(percentile(perCapture, 90), 2)}) | ${round(percentile(perRefusal, 50), 2)} ms | ${round(dayBytes / DAY, 0)} B | ${round(dayBytes / 1024 / 1024, 1)} MiB | ${firstPage} / ${byKey} / ${failed} ms | ${swept} rows in ${round(sweepSeconds, 1)} s |`,
    ];
  } finally {
    await db.close();
    await database.drop();
  }
}

export async function measureRequestLog(): Promise<{ markdown: string; failures: number }> {
  const lines = [
    "| database | capture row (reserve + commit, paid without the log too) | refusal row (the log's own write) | bytes per capture (row + indexes) | a day at 1/s | first page: all / one key / failed | sweep of the day |",
    '|---|---|---|---|---|---|---|',
  ];
  for (const kind of ['sqlite', 'mysql'] as const) lines.push(...(await measureOn(kind)));
  return { markdown: lines.join('\n'), failures: 0 };
}

runWhenInvokedDirectly(import.meta.url, measureRequestLog);

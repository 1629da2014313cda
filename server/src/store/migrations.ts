import type { Knex } from 'knex';
import { initial } from './initial-migration.js';
import { storageConfigs } from './storage-config-migration.js';
import { dashboardSessions, signInAttempts, signInFailures } from './dashboard-sign-in-migrations.js';
import { signingSecrets } from './signing-secret-migration.js';
import { ledgerMode, reservationDeadline } from './ledger-migrations.js';
import { planConcurrency, planShare } from './plan-limit-migrations.js';
import { captureJobs } from './capture-job-migration.js';
import { captureBatches } from './batch-migration.js';
import { requestLog } from './request-log-migration.js';
import { webhookDeliveries } from './webhook-migration.js';
import { monitors } from './monitor-migration.js';

/**
 * Migrations live in code so that the same list runs unchanged on SQLite and MySQL/MariaDB.
 * Timestamps are BIGINT epoch milliseconds on both: one representation, compared in SQL.
 */

/**
 * Run in this order, each once. knex records each name in the database, so a name stays: one
 * changed here needs its former name in former-migration-names.ts.
 */
const MIGRATIONS: Record<string, Knex.Migration> = {
  '0001_initial': initial,
  '0002_storage_configs': storageConfigs,
  '0003_dashboard_sessions': dashboardSessions,
  '0004_signing_secrets': signingSecrets,
  '0004_ledger_mode': ledgerMode,
  '0005_reservation_deadline': reservationDeadline,
  '0006_plan_share': planShare,
  '0007_sign_in_failures': signInFailures,
  '0008_plan_concurrency': planConcurrency,
  '0009_sign_in_attempts': signInAttempts,
  '0010_capture_jobs': captureJobs,
  '0011_capture_batches': captureBatches,
  '0012_request_log': requestLog,
  '0013_webhook_deliveries': webhookDeliveries,
  '0014_monitors': monitors,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(MIGRATIONS),
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS[name]!,
};

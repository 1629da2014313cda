import type { Knex } from 'knex';
import { captureBatches } from './batch-migration.js';
import { requestLog } from './request-log-migration.js';
import { webhookDeliveries } from './webhook-migration.js';
import { monitors } from './monitor-migration.js';

/**
 * Migrations live in code so that the same list runs unchanged on SQLite and MySQL/MariaDB.
 * Timestamps are BIGINT epoch milliseconds on both: one representation, compared in SQL.
 */
const initial: Knex.Migration = {
  async up(knex) {
    await knex.schema.createTable('plans', (t) => {
      t.string('id', 36).primary();
      t.string('name', 100).notNullable().unique();
      t.string('tier', 50).notNullable();
      t.integer('credits_per_month').notNullable();
      t.boolean('rollover').notNullable().defaultTo(false);
      t.integer('rate_limit_max').nullable();
      t.integer('rate_limit_window_ms').nullable();
      t.bigInteger('created_at').notNullable();
    });
    await knex.schema.createTable('organizations', (t) => {
      t.string('id', 36).primary();
      t.string('name', 200).notNullable();
      t.bigInteger('created_at').notNullable();
    });
    await knex.schema.createTable('users', (t) => {
      t.string('id', 36).primary();
      t.string('email', 320).notNullable().unique();
      t.string('name', 200).notNullable();
      t.string('password_hash', 255).nullable();
      t.bigInteger('created_at').notNullable();
    });
    await knex.schema.createTable('memberships', (t) => {
      t.string('id', 36).primary();
      t.string('organization_id', 36).notNullable().references('organizations.id').onDelete('CASCADE');
      t.string('user_id', 36).notNullable().references('users.id').onDelete('CASCADE');
      t.string('role', 20).notNullable().defaultTo('member');
      t.boolean('active').notNullable().defaultTo(true);
      t.bigInteger('created_at').notNullable();
      t.unique(['organization_id', 'user_id']);
    });
    await knex.schema.createTable('api_keys', (t) => {
      t.string('id', 36).primary();
      t.string('organization_id', 36).nullable().references('organizations.id').onDelete('CASCADE');
      t.string('user_id', 36).nullable().references('users.id').onDelete('SET NULL');
      t.string('name', 200).notNullable();
      t.string('key_hash', 64).notNullable().unique();
      t.string('prefix', 16).notNullable();
      t.bigInteger('expires_at').nullable();
      t.bigInteger('revoked_at').nullable();
      t.bigInteger('last_used_at').nullable();
      t.bigInteger('created_at').notNullable();
      t.index(['organization_id']);
    });
    await knex.schema.createTable('subscriptions', (t) => {
      t.string('id', 36).primary();
      t.string('organization_id', 36).notNullable().unique().references('organizations.id').onDelete('CASCADE');
      t.string('plan_id', 36).notNullable().references('plans.id');
      t.string('status', 20).notNullable();
      t.string('billing_cycle', 20).notNullable();
      t.bigInteger('created_at').notNullable();
    });
    // One row per organization: the open period and its balance. `remaining` excludes reserved credits.
    await knex.schema.createTable('credit_balances', (t) => {
      t.string('organization_id', 36).primary().references('organizations.id').onDelete('CASCADE');
      t.bigInteger('period_start').notNullable();
      t.bigInteger('period_end').notNullable();
      t.integer('allocation').notNullable();
      t.integer('carried_over').notNullable().defaultTo(0);
      t.integer('remaining').notNullable();
      t.integer('reserved').notNullable().defaultTo(0);
      t.integer('used').notNullable().defaultTo(0);
    });
    await knex.schema.createTable('capture_ledger', (t) => {
      t.string('request_id', 36).primary();
      t.string('organization_id', 36).notNullable().references('organizations.id').onDelete('CASCADE');
      t.string('api_key_id', 36).nullable();
      t.string('status', 20).notNullable(); // reserved | charged | released | cache_hit
      t.string('format', 10).notNullable();
      t.string('source', 10).notNullable(); // url | html
      t.string('target_host', 255).nullable();
      t.integer('credits').notNullable();
      t.integer('processing_ms').nullable();
      t.integer('file_size').nullable();
      t.string('user_agent', 1024).nullable();
      t.string('error_code', 40).nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('finished_at').nullable();
      t.index(['organization_id', 'created_at']);
      t.index(['status', 'created_at']);
    });
  },
  async down(knex) {
    for (const table of [
      'capture_ledger',
      'credit_balances',
      'subscriptions',
      'api_keys',
      'memberships',
      'users',
      'organizations',
      'plans',
    ]) {
      await knex.schema.dropTableIfExists(table);
    }
  },
};

/**
 * Storage configurations of an organization (the dashboard's "storage" page). The secret access
 * key is stored AES-256-GCM encrypted (security/secret-box.ts); at most one row per
 * organization has is_default set, which StorageConfigRepository keeps inside transactions
 * (MySQL has no partial unique index to enforce it).
 */
const storageConfigs: Knex.Migration = {
  async up(knex) {
    await knex.schema.createTable('storage_configs', (t) => {
      t.string('id', 36).primary();
      t.string('organization_id', 36).notNullable().references('organizations.id').onDelete('CASCADE');
      t.string('name', 200).notNullable();
      t.string('endpoint', 2048).notNullable();
      t.string('bucket', 255).notNullable();
      t.string('region', 64).notNullable().defaultTo('us-east-1');
      t.string('access_key_id', 256).notNullable();
      t.text('secret_encrypted').notNullable();
      t.boolean('is_default').notNullable().defaultTo(false);
      t.boolean('force_path_style').notNullable().defaultTo(true);
      t.bigInteger('created_at').notNullable();
      t.unique(['organization_id', 'name']);
      t.index(['organization_id', 'is_default']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('storage_configs');
  },
};

/**
 * Signed-in dashboard users. Only the SHA-256 of the session token is stored (the cookie holds the
 * token), so a copy of the table signs nobody in. `csrf_token` is the session's synchronizer token;
 * `flash` is a one-shot message encrypted with a key derived from the session token.
 */
const dashboardSessions: Knex.Migration = {
  async up(knex) {
    await knex.schema.createTable('dashboard_sessions', (t) => {
      t.string('id', 36).primary();
      t.string('token_hash', 64).notNullable().unique();
      t.string('user_id', 36).notNullable().references('users.id').onDelete('CASCADE');
      t.string('organization_id', 36).nullable().references('organizations.id').onDelete('SET NULL');
      t.string('csrf_token', 64).notNullable();
      t.text('flash').nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('last_seen_at').notNullable();
      t.bigInteger('expires_at').notNullable();
      t.index(['user_id']);
      t.index(['expires_at']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('dashboard_sessions');
  },
};

/**
 * Signed capture links (docs/signed-links.md): each API key's signing secret, encrypted with the
 * server key (AES-256-GCM bound to the key's id; never in clear), and the organization setting that
 * refuses keys sent in the query string.
 */
const signingSecrets: Knex.Migration = {
  async up(knex) {
    await knex.schema.alterTable('api_keys', (t) => {
      t.text('signing_secret_encrypted').nullable();
    });
    await knex.schema.alterTable('organizations', (t) => {
      t.boolean('require_signed_links').notNullable().defaultTo(false);
    });
  },
  async down(knex) {
    await knex.schema.alterTable('api_keys', (t) => t.dropColumn('signing_secret_encrypted'));
    await knex.schema.alterTable('organizations', (t) => t.dropColumn('require_signed_links'));
  },
};

/** Async captures (POST /captures) are marked in the ledger so the dashboard can list them as jobs. */
const ledgerMode: Knex.Migration = {
  async up(knex) {
    await knex.schema.alterTable('capture_ledger', (t) => {
      t.string('mode', 10).notNullable().defaultTo('sync'); // sync | async
    });
  },
  async down(knex) {
    await knex.schema.alterTable('capture_ledger', (t) => t.dropColumn('mode'));
  },
};

/**
 * Each reservation carries the end of its own capture's deadline, so the sweeper releases a crashed
 * capture's credits soon after that deadline, and never those of a capture still allowed to run
 * (a long `delay` lengthens the deadline).
 */
const reservationDeadline: Knex.Migration = {
  async up(knex) {
    await knex.schema.alterTable('capture_ledger', (t) => {
      t.bigInteger('deadline_at').nullable(); // epoch ms; null for rows written before this migration
    });
  },
  async down(knex) {
    await knex.schema.alterTable('capture_ledger', (t) => t.dropColumn('deadline_at'));
  },
};

/**
 * Fair share of the browser as a plan setting (docs/render-slots.md): the percent of the slots an
 * organization of the plan may hold while others wait (null: MAX_ORG_SHARE_PERCENT) and its weight
 * in the round-robin between waiting organizations.
 */
const planShare: Knex.Migration = {
  async up(knex) {
    await knex.schema.alterTable('plans', (t) => {
      t.integer('max_share_percent').nullable();
      t.integer('fair_share_weight').notNullable().defaultTo(1);
    });
  },
  async down(knex) {
    await knex.schema.alterTable('plans', (t) => {
      t.dropColumn('max_share_percent');
      t.dropColumn('fair_share_weight');
    });
  },
};

/**
 * The dashboard's sign-in throttle in the shared database: one row per failed sign-in and subject
 * (SHA-256 of the email or the client address), so every instance sees the same lock.
 */
const signInFailures: Knex.Migration = {
  async up(knex) {
    await knex.schema.createTable('sign_in_failures', (t) => {
      t.bigIncrements('id');
      t.string('subject', 64).notNullable();
      t.bigInteger('failed_at').notNullable();
      t.index(['subject', 'failed_at']);
      t.index(['failed_at']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('sign_in_failures');
  },
};

/**
 * A plan's limit of concurrent captures (services/concurrency-gate.ts): null for the deployment's
 * default (ORG_MAX_CONCURRENT_CAPTURES).
 */
const planConcurrency: Knex.Migration = {
  async up(knex) {
    await knex.schema.alterTable('plans', (t) => t.integer('max_concurrent_captures').nullable());
  },
  async down(knex) {
    await knex.schema.alterTable('plans', (t) => t.dropColumn('max_concurrent_captures'));
  },
};

/**
 * Sign-in attempts counted per subject (email and address together, address, email) in one row
 * each, taken by one atomic UPDATE (sign-in-attempt-repository.ts). Replaces the rows per failure
 * of sign_in_failures above, which parallel guesses raced past.
 */
const signInAttempts: Knex.Migration = {
  async up(knex) {
    await knex.schema.createTable('sign_in_attempts', (t) => {
      t.string('subject', 64).primary();
      t.bigInteger('window_start').notNullable();
      t.integer('attempts').notNullable();
      t.index(['window_start']);
    });
    await knex.schema.dropTableIfExists('sign_in_failures');
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('sign_in_attempts');
    await signInFailures.up(knex);
  },
};

/**
 * The async job's record lives in the database, not in Redis (Redis carries the queue only;
 * docs/async-jobs.md). `job_charges` is the charge of a job keyed by its id: written in the same
 * transaction that marks the job succeeded and records where its file is, so a job is charged at
 * most once whatever dies when. `capture_ledger.job_id` ties each attempt's reservation to its job.
 */
const captureJobs: Knex.Migration = {
  async up(knex) {
    await knex.schema.createTable('capture_jobs', (t) => {
      t.string('id', 36).primary();
      t.string('organization_id', 36).notNullable().references('organizations.id').onDelete('CASCADE');
      t.string('api_key_id', 36).nullable();
      t.string('status', 12).notNullable(); // queued | active | succeeded | failed
      t.integer('priority').notNullable().defaultTo(1);
      t.text('payload', 'mediumtext').notNullable(); // the job's options without secrets (JSON)
      t.boolean('has_secrets').notNullable().defaultTo(false);
      // Set once the queue entry exists and the caller is about to get its 202: a record without it was never acknowledged.
      t.boolean('enqueued').notNullable().defaultTo(false);
      t.integer('attempts').notNullable().defaultTo(0);
      t.string('lease_token', 36).nullable();
      t.bigInteger('lease_until').nullable();
      t.text('result', 'mediumtext').nullable(); // JSON: file name, size, mime, page, where the file is
      t.string('error_code', 40).nullable();
      t.text('error_message').nullable();
      t.integer('credits_charged').notNullable().defaultTo(0);
      t.string('webhook_url', 2048).nullable();
      t.string('webhook_state', 12).nullable(); // pending | queued | delivered
      t.string('base_url', 512).notNullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('started_at').nullable();
      t.bigInteger('finished_at').nullable();
      t.bigInteger('expires_at').nullable();
      t.index(['status', 'priority']);
      t.index(['organization_id', 'status']);
      t.index(['expires_at']);
    });
    await knex.schema.createTable('job_charges', (t) => {
      t.string('job_id', 36).primary();
      t.string('request_id', 36).notNullable();
      t.string('organization_id', 36).notNullable();
      t.integer('credits').notNullable();
      t.bigInteger('charged_at').notNullable();
    });
    await knex.schema.alterTable('capture_ledger', (t) => {
      t.string('job_id', 36).nullable().index();
    });
  },
  async down(knex) {
    await knex.schema.alterTable('capture_ledger', (t) => t.dropColumn('job_id'));
    await knex.schema.dropTableIfExists('job_charges');
    await knex.schema.dropTableIfExists('capture_jobs');
  },
};

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

import type { Knex } from 'knex';

/**
 * The async job's record lives in the database, not in Redis (Redis carries the queue only;
 * docs/async-jobs.md). `job_charges` is the charge of a job keyed by its id: written in the same
 * transaction that marks the job succeeded and records where its file is, so a job is charged at
 * most once whatever dies when. `capture_ledger.job_id` ties each attempt's reservation to its job.
 */
export const captureJobs: Knex.Migration = {
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

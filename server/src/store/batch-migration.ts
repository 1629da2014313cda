import type { Knex } from 'knex';

/**
 * Bulk captures (docs/bulk.md). A batch is a group of async jobs (`capture_jobs`): its own record
 * (state, batch webhook) and one row per item tying its index to its job. The jobs keep their
 * records, charges and files where docs/async-jobs.md says they live.
 */
export const captureBatches: Knex.Migration = {
  async up(knex) {
    await knex.schema.createTable('capture_batches', (t) => {
      t.string('id', 36).primary();
      t.string('organization_id', 36).notNullable().references('organizations.id').onDelete('CASCADE');
      t.string('api_key_id', 36).nullable();
      t.string('state', 12).notNullable(); // open | completed | cancelled
      t.integer('item_count').notNullable();
      t.string('webhook_url', 2048).nullable();
      t.string('webhook_state', 12).nullable(); // pending | queued
      t.string('base_url', 512).notNullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('finished_at').nullable();
      t.bigInteger('expires_at').nullable();
      t.index(['organization_id', 'created_at']);
      t.index(['state']);
    });
    await knex.schema.createTable('capture_batch_items', (t) => {
      t.string('batch_id', 36).notNullable().references('capture_batches.id').onDelete('CASCADE');
      t.integer('item_index').notNullable();
      t.string('job_id', 36).notNullable().index();
      t.primary(['batch_id', 'item_index']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('capture_batch_items');
    await knex.schema.dropTableIfExists('capture_batches');
  },
};

import type { Knex } from 'knex';

/**
 * The request log: the capture ledger already holds one row per capture that reserved credits
 * (its time, key, format, outcome, credits, duration), so it becomes the log rather than a second
 * table written beside it. These columns add what a user reads when something went wrong: which
 * face sent the capture (`kind`), where it went (`target`: host, path and the query as the logs
 * redact it) and what the caller was answered (`http_status`). Captures refused before any credit
 * was reserved (bad input, no credits, the rate limit) get rows of their own with status `refused`.
 */
export const requestLog: Knex.Migration = {
  async up(knex) {
    await knex.schema.alterTable('capture_ledger', (t) => {
      t.string('kind', 10).notNullable().defaultTo('sync'); // sync | async | batch | mcp | monitor
      t.string('target', 2048).nullable();
      t.integer('http_status').nullable();
      t.index(['organization_id', 'api_key_id', 'created_at']);
      t.index(['created_at']);
    });
  },
  async down(knex) {
    await knex.schema.alterTable('capture_ledger', (t) => {
      t.dropIndex(['organization_id', 'api_key_id', 'created_at']);
      t.dropIndex(['created_at']);
      t.dropColumn('kind');
      t.dropColumn('target');
      t.dropColumn('http_status');
    });
  },
};

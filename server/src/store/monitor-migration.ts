import type { Knex } from 'knex';

/**
 * Monitors (a page captured on a schedule; docs/monitors.md) and their runs. The schedule's truth
 * is here, not in Redis: BullMQ's job schedulers are rebuilt from `monitors` after a Redis
 * restarted empty. `lease_token`/`lease_until` hold a running monitor, so two processes (or a
 * scheduler rebuilt while a run was under way) never run it twice at once.
 *
 * A run keeps the page's text (MEDIUMTEXT on MySQL/MariaDB, TEXT affinity on SQLite) because the
 * next run compares its own text with it: re-reading a page of the past is not possible.
 */
export const monitors: Knex.Migration = {
  async up(knex) {
    await knex.schema.createTable('monitors', (t) => {
      t.string('id', 36).primary();
      t.string('organization_id', 36).notNullable().references('organizations.id').onDelete('CASCADE');
      // The key whose signing secret signs the webhooks; a key deleted later leaves the monitor running.
      t.string('api_key_id', 36).nullable();
      t.string('name', 200).notNullable();
      t.string('url', 2048).notNullable();
      t.text('options', 'mediumtext').notNullable(); // JSON: the capture options it runs with (styles and scripts may be long)
      t.integer('interval_seconds').notNullable();
      t.double('threshold').notNullable();
      t.string('webhook_url', 2048).nullable();
      t.text('ignore_selectors', 'mediumtext').notNullable(); // JSON array
      t.boolean('paused').notNullable().defaultTo(false);
      t.string('paused_reason', 10).nullable(); // user | credits
      t.string('golden_run_id', 36).nullable();
      // The address the caller used: image links in runs and webhooks are built on it.
      t.string('base_url', 300).notNullable();
      t.string('lease_token', 36).nullable();
      t.bigInteger('lease_until').nullable();
      t.bigInteger('next_run_at').nullable();
      t.bigInteger('last_run_at').nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.index(['organization_id', 'created_at']);
      t.index(['paused', 'paused_reason']);
    });
    await knex.schema.createTable('monitor_runs', (t) => {
      t.string('id', 36).primary();
      t.string('monitor_id', 36).notNullable().references('monitors.id').onDelete('CASCADE');
      t.string('organization_id', 36).notNullable();
      t.string('status', 12).notNullable(); // running | succeeded | failed
      t.string('request_id', 36).nullable();
      t.bigInteger('started_at').notNullable();
      t.bigInteger('finished_at').nullable();
      t.integer('credits').notNullable().defaultTo(0);
      t.integer('target_status').nullable();
      t.integer('load_ms').nullable();
      t.string('error_code', 40).nullable();
      t.string('error_message', 1000).nullable();
      t.string('image_key', 200).nullable();
      t.specificType('page_text', 'mediumtext').nullable();
      t.double('diff_percent').nullable();
      t.boolean('diff_changed').nullable();
      t.text('diff', 'mediumtext').nullable(); // JSON: the rest of the CaptureDiff (threshold, pixels, size, regions, text added/removed)
      t.string('diff_image_key', 200).nullable();
      t.string('baseline_run_id', 36).nullable();
      t.index(['monitor_id', 'started_at']);
    });
    // Monitors a plan allows; null: the deployment's MONITORS_PER_ORGANIZATION.
    await knex.schema.alterTable('plans', (t) => t.integer('max_monitors').nullable());
  },
  async down(knex) {
    await knex.schema.alterTable('plans', (t) => t.dropColumn('max_monitors'));
    await knex.schema.dropTableIfExists('monitor_runs');
    await knex.schema.dropTableIfExists('monitors');
  },
};

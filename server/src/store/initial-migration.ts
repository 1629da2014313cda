import type { Knex } from 'knex';

/** The first schema: plans, organizations, users and their keys, subscriptions, credit balances and the capture ledger. */
export const initial: Knex.Migration = {
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

/** A plan's limits added after the first schema: its fair share of the browser and its concurrent captures. */
import type { Knex } from 'knex';

/**
 * Fair share of the browser as a plan setting (docs/render-slots.md): the percent of the slots an
 * organization of the plan may hold while others wait (null: MAX_ORG_SHARE_PERCENT) and its weight
 * in the round-robin between waiting organizations.
 */
export const planShare: Knex.Migration = {
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
 * A plan's limit of concurrent captures (services/concurrency-gate.ts): null for the deployment's
 * default (ORG_MAX_CONCURRENT_CAPTURES).
 */
export const planConcurrency: Knex.Migration = {
  async up(knex) {
    await knex.schema.alterTable('plans', (t) => t.integer('max_concurrent_captures').nullable());
  },
  async down(knex) {
    await knex.schema.alterTable('plans', (t) => t.dropColumn('max_concurrent_captures'));
  },
};

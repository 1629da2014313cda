/** Columns added to the capture ledger after the first schema: a capture's mode and its reservation's deadline. */
import type { Knex } from 'knex';

/** Async captures (POST /captures) are marked in the ledger so the dashboard can list them as jobs. */
export const ledgerMode: Knex.Migration = {
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
export const reservationDeadline: Knex.Migration = {
  async up(knex) {
    await knex.schema.alterTable('capture_ledger', (t) => {
      t.bigInteger('deadline_at').nullable(); // epoch ms; null for rows written before this migration
    });
  },
  async down(knex) {
    await knex.schema.alterTable('capture_ledger', (t) => t.dropColumn('deadline_at'));
  },
};

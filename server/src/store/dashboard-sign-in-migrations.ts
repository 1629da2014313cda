/** The dashboard's sign-in tables: its sessions and the throttle of failed sign-ins (its first and its current form). */
import type { Knex } from 'knex';

/**
 * Signed-in dashboard users. Only the SHA-256 of the session token is stored (the cookie holds the
 * token), so a copy of the table signs nobody in. `csrf_token` is the session's synchronizer token;
 * `flash` is a one-shot message encrypted with a key derived from the session token.
 */
export const dashboardSessions: Knex.Migration = {
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
 * The dashboard's sign-in throttle in the shared database: one row per failed sign-in and subject
 * (SHA-256 of the email or the client address), so every instance sees the same lock.
 */
export const signInFailures: Knex.Migration = {
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
 * Sign-in attempts counted per subject (email and address together, address, email) in one row
 * each, taken by one atomic UPDATE (sign-in-attempt-repository.ts). Replaces the rows per failure
 * of sign_in_failures above, which parallel guesses raced past.
 */
export const signInAttempts: Knex.Migration = {
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

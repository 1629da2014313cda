import type { Knex } from 'knex';

/**
 * Webhook deliveries on record (docs/async-and-webhooks.md, "Webhook deliveries"). BullMQ keeps a
 * delivery only for its retention and keeps no trace of the attempts, so each event (what was sent,
 * where, for which job or batch) and each attempt (when, the answer, how long, when the next one is
 * due) is written here.
 *
 * The body is stored as bytes (a BLOB, MEDIUMBLOB on MySQL/MariaDB for a batch of 500 items)
 * rather than text, so a resend is byte-identical whatever the database's character set.
 * `mediumblob` is a valid type name for SQLite too (its BLOB affinity). The dashboard's pages of
 * jobs, which list these deliveries, get their index here too.
 */
export const webhookDeliveries: Knex.Migration = {
  async up(knex) {
    await knex.schema.createTable('webhook_events', (t) => {
      t.string('id', 64).primary(); // the message id: the webhook-id header of every attempt
      t.string('organization_id', 36).notNullable().references('organizations.id').onDelete('CASCADE');
      t.string('job_id', 36).nullable();
      t.string('batch_id', 36).nullable();
      t.string('event_type', 40).notNullable();
      t.string('url', 2048).notNullable();
      t.string('api_key_id', 36).nullable();
      t.specificType('body', 'mediumblob').notNullable();
      t.bigInteger('created_at').notNullable();
      t.index(['organization_id', 'job_id']);
      t.index(['organization_id', 'batch_id']);
      t.index(['created_at']);
    });
    await knex.schema.createTable('webhook_attempts', (t) => {
      t.increments('id');
      t.string('event_id', 64).notNullable().references('webhook_events.id').onDelete('CASCADE');
      // The BullMQ job that made it: the event id itself, or a resend's own id.
      t.string('delivery_id', 120).notNullable();
      t.integer('attempt').notNullable();
      t.bigInteger('attempted_at').notNullable();
      t.integer('response_status').nullable();
      t.string('error', 300).nullable();
      t.integer('duration_ms').notNullable();
      t.bigInteger('next_retry_at').nullable();
      t.index(['event_id', 'attempted_at']);
    });
    // The dashboard's Jobs page reads an organization's latest jobs.
    await knex.schema.alterTable('capture_jobs', (t) => {
      t.index(['organization_id', 'created_at']);
    });
  },
  async down(knex) {
    await knex.schema.alterTable('capture_jobs', (t) => {
      t.dropIndex(['organization_id', 'created_at']);
    });
    await knex.schema.dropTableIfExists('webhook_attempts');
    await knex.schema.dropTableIfExists('webhook_events');
  },
};

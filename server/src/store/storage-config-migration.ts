import type { Knex } from 'knex';

/**
 * Storage configurations of an organization (the dashboard's "storage" page). The secret access
 * key is stored AES-256-GCM encrypted (security/secret-box.ts); at most one row per
 * organization has is_default set, which StorageConfigRepository keeps inside transactions
 * (MySQL has no partial unique index to enforce it).
 */
export const storageConfigs: Knex.Migration = {
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

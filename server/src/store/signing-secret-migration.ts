import type { Knex } from 'knex';

/**
 * Signed capture links (docs/signed-links.md): each API key's signing secret, encrypted with the
 * server key (AES-256-GCM bound to the key's id; never in clear), and the organization setting that
 * refuses keys sent in the query string.
 */
export const signingSecrets: Knex.Migration = {
  async up(knex) {
    await knex.schema.alterTable('api_keys', (t) => {
      t.text('signing_secret_encrypted').nullable();
    });
    await knex.schema.alterTable('organizations', (t) => {
      t.boolean('require_signed_links').notNullable().defaultTo(false);
    });
  },
  async down(knex) {
    await knex.schema.alterTable('api_keys', (t) => t.dropColumn('signing_secret_encrypted'));
    await knex.schema.alterTable('organizations', (t) => t.dropColumn('require_signed_links'));
  },
};

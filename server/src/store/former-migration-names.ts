import type { Knex } from 'knex';
import { LEGACY } from '../legacy-names.js';

/**
 * Names migrations ran under before they were named for what they do. knex keeps the name of every
 * migration it ran and refuses to start when one of them is not in the list ("the migration
 * directory is corrupt"), so a database migrated under these names gets the new ones before knex
 * looks. A migration that changes what it does gets a new entry in migrations.ts, never a new name.
 */
export const FORMER_MIGRATION_NAMES: Readonly<Record<string, string>> = {
  '0004_issue17_signing_secrets': '0004_signing_secrets',
  '0004_issue18_ledger_mode': '0004_ledger_mode',
  '0005_issue13_reservation_deadline': '0005_reservation_deadline',
  '0006_issue15_plan_share': '0006_plan_share',
  '0007_issue15_sign_in_failures': '0007_sign_in_failures',
  '0008_issue27_plan_concurrency': '0008_plan_concurrency',
  '0009_issue28_sign_in_attempts': '0009_sign_in_attempts',
  '0010_issue27_capture_jobs': '0010_capture_jobs',
  '0011_issue34_capture_batches': '0011_capture_batches',
};

/**
 * A database of the Rendershot days (legacy-names.ts) keeps its record of migrations under the old
 * table name: read under the new one, every migration would run again over the existing tables.
 * Processes starting together may race here: the loser finds the table already renamed.
 */
async function adoptLegacyTable(knex: Knex, legacy: string, table: string): Promise<void> {
  if ((await knex.schema.hasTable(table)) || !(await knex.schema.hasTable(legacy))) return;
  try {
    await knex.schema.renameTable(legacy, table);
  } catch (error) {
    if (!(await knex.schema.hasTable(table))) throw error;
  }
}

/**
 * Brings a database's record of migrations to today's names: the Rendershot table name, then each
 * former migration name. Every step finds nothing to do the second time, so it runs at every start.
 */
export async function adoptFormerNames(knex: Knex, table: string): Promise<void> {
  await adoptLegacyTable(knex, LEGACY.migrationsTable, table);
  await adoptLegacyTable(knex, `${LEGACY.migrationsTable}_lock`, `${table}_lock`);
  if (!(await knex.schema.hasTable(table))) return;
  const found = (await knex(table).whereIn('name', Object.keys(FORMER_MIGRATION_NAMES)).select('name')) as Array<{ name: string }>;
  for (const { name } of found) {
    await knex(table).where({ name }).update({ name: FORMER_MIGRATION_NAMES[name] });
  }
}

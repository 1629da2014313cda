import { randomUUID } from 'node:crypto';
import type { Database } from './database.js';

export interface ApiKeyRow {
  id: string;
  organization_id: string | null;
  user_id: string | null;
  name: string;
  key_hash: string;
  prefix: string;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  created_at: number;
}

/** What authentication needs to know about a key, read in one query with the database clock. */
export interface KeyLookup extends ApiKeyRow {
  db_now: number;
  membership_active: number | boolean | null;
}

export class ApiKeyRepository {
  constructor(private readonly db: Database) {}

  async insert(row: Omit<ApiKeyRow, 'id' | 'created_at' | 'last_used_at' | 'revoked_at'>): Promise<ApiKeyRow> {
    const full: ApiKeyRow = { ...row, id: randomUUID(), created_at: Date.now(), last_used_at: null, revoked_at: null };
    await this.db.knex('api_keys').insert(full);
    return full;
  }

  async findByHash(keyHash: string): Promise<KeyLookup | undefined> {
    const row = await this.db
      .knex('api_keys as k')
      .leftJoin('memberships as m', function joinMembership() {
        this.on('m.user_id', '=', 'k.user_id').andOn('m.organization_id', '=', 'k.organization_id');
      })
      .where('k.key_hash', keyHash)
      .first('k.*', 'm.active as membership_active', this.db.knex.raw(`${this.db.nowMs().toQuery()} as db_now`));
    if (!row) return undefined;
    return { ...row, db_now: Number(row.db_now), expires_at: row.expires_at === null ? null : Number(row.expires_at) } as KeyLookup;
  }

  /** Last-used time is informational: written at most once a minute per key to keep the hot path cheap. */
  async touch(id: string, now = Date.now()): Promise<void> {
    await this.db
      .knex('api_keys')
      .where('id', id)
      .andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', now - 60_000))
      .update({ last_used_at: now });
  }

  async list(organizationId: string): Promise<ApiKeyRow[]> {
    return this.db.knex<ApiKeyRow>('api_keys').where('organization_id', organizationId).orderBy('created_at');
  }

  async revoke(id: string, now = Date.now()): Promise<boolean> {
    const count = await this.db.knex('api_keys').where('id', id).whereNull('revoked_at').update({ revoked_at: now });
    return count > 0;
  }
}

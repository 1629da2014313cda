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
  /** The signing secret, encrypted with the server key (null for keys made before signed links). */
  signing_secret_encrypted: string | null;
}

/** What authentication needs to know about a key, read in one query with the database clock. */
export interface KeyLookup extends ApiKeyRow {
  db_now: number;
  membership_active: number | boolean | null;
  /** The organization refuses keys sent in the query string (signed links only). */
  require_signed_links: number | boolean | null;
  /** The plan's share of the browser: null for the MAX_ORG_SHARE_PERCENT default (docs/render-slots.md). */
  plan_max_share_percent: number | null;
  /** The plan's weight in the round-robin between waiting organizations (null without a subscription). */
  plan_fair_share_weight: number | null;
  /** The plan's limit of concurrent captures: null for ORG_MAX_CONCURRENT_CAPTURES (docs/render-slots.md). */
  plan_max_concurrent_captures: number | null;
}

/** Keys whose last-used time this process wrote, and when: at most this many are remembered. */
const TOUCHED_KEYS_REMEMBERED = 10_000;
const TOUCH_EVERY_MS = 60_000;

export class ApiKeyRepository {
  private readonly touched = new Map<string, number>();

  constructor(private readonly db: Database) {}

  /** `encryptSecret` seals the signing secret with the new row's id (the id is chosen here). */
  async insert(
    row: Omit<ApiKeyRow, 'id' | 'created_at' | 'last_used_at' | 'revoked_at' | 'signing_secret_encrypted'>,
    encryptSecret: (id: string) => string | null = () => null,
  ): Promise<ApiKeyRow> {
    const id = randomUUID();
    const full: ApiKeyRow = {
      ...row,
      id,
      created_at: Date.now(),
      last_used_at: null,
      revoked_at: null,
      signing_secret_encrypted: encryptSecret(id),
    };
    await this.db.knex('api_keys').insert(full);
    return full;
  }

  private lookup() {
    return this.db
      .knex('api_keys as k')
      .leftJoin('memberships as m', function joinMembership() {
        this.on('m.user_id', '=', 'k.user_id').andOn('m.organization_id', '=', 'k.organization_id');
      })
      .leftJoin('organizations as o', 'o.id', 'k.organization_id')
      .leftJoin('subscriptions as s', 's.organization_id', 'k.organization_id')
      .leftJoin('plans as p', 'p.id', 's.plan_id');
  }

  private async lookupRow(query: ReturnType<ApiKeyRepository['lookup']>): Promise<KeyLookup | undefined> {
    const row = await query.first(
      'k.*',
      'm.active as membership_active',
      'o.require_signed_links as require_signed_links',
      'p.max_share_percent as plan_max_share_percent',
      'p.fair_share_weight as plan_fair_share_weight',
      'p.max_concurrent_captures as plan_max_concurrent_captures',
      this.db.knex.raw(`${this.db.nowMs().toQuery()} as db_now`),
    );
    if (!row) return undefined;
    return { ...row, db_now: Number(row.db_now), expires_at: row.expires_at === null ? null : Number(row.expires_at) } as KeyLookup;
  }

  async findByHash(keyHash: string): Promise<KeyLookup | undefined> {
    return this.lookupRow(this.lookup().where('k.key_hash', keyHash));
  }

  /** The key a signed link names by its id. */
  async findById(id: string): Promise<KeyLookup | undefined> {
    return this.lookupRow(this.lookup().where('k.id', id));
  }

  async findSigningSecret(id: string): Promise<string | null | undefined> {
    const row = await this.db.knex('api_keys').where('id', id).first('signing_secret_encrypted');
    return row ? (row.signing_secret_encrypted as string | null) : undefined;
  }

  /** Replaces the encrypted signing secret of an unrevoked key; false when there is none. */
  async setSigningSecret(id: string, encrypted: string): Promise<boolean> {
    const count = await this.db.knex('api_keys').where('id', id).whereNull('revoked_at').update({ signing_secret_encrypted: encrypted });
    return count > 0;
  }

  /**
   * Last-used time is informational: written at most once a minute per key to keep the hot path
   * cheap. The UPDATE's condition holds that across instances; a key this process wrote within the
   * minute skips the statement altogether (one statement less on almost every capture).
   */
  async touch(id: string, now = Date.now()): Promise<void> {
    const last = this.touched.get(id);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
    await this.db
      .knex('api_keys')
      .where('id', id)
      .andWhere((q) => {
        q.whereNull('last_used_at').orWhere('last_used_at', '<', now - TOUCH_EVERY_MS);
      })
      .update({ last_used_at: now });
    // Remembered once written: a failed write is tried again by the next capture.
    if (this.touched.size >= TOUCHED_KEYS_REMEMBERED) this.touched.clear();
    this.touched.set(id, now);
  }

  async list(organizationId: string): Promise<ApiKeyRow[]> {
    return this.db.knex<ApiKeyRow>('api_keys').where('organization_id', organizationId).orderBy('created_at');
  }

  async revoke(id: string, now = Date.now()): Promise<boolean> {
    const count = await this.db.knex('api_keys').where('id', id).whereNull('revoked_at').update({ revoked_at: now });
    return count > 0;
  }
}

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError, errors } from '../errors.js';
import type { ApiKeyRepository, ApiKeyRow } from '../store/api-key-repository.js';

const KEY_PREFIX = 'rs_';
const VISIBLE_PREFIX_LENGTH = 10;

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** 32 random bytes (256 bits): a hash without salt is enough, nobody can guess such a key. */
export function generateApiKey(): { key: string; hash: string; prefix: string } {
  const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, hash: hashApiKey(key), prefix: key.slice(0, VISIBLE_PREFIX_LENGTH) };
}

export interface AuthenticatedKey {
  keyId: string;
  organizationId: string | null;
  userId: string | null;
  membershipActive: boolean;
}

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  name: string;
  organizationId: string | null;
  expiresAt: string | null;
}

export class ApiKeyService {
  constructor(private readonly keys: ApiKeyRepository) {}

  async create(options: { organizationId: string | null; userId?: string | null; name: string; expiresAt?: Date | null }): Promise<CreatedKey> {
    const generated = generateApiKey();
    const row = await this.keys.insert({
      organization_id: options.organizationId,
      user_id: options.userId ?? null,
      name: options.name,
      key_hash: generated.hash,
      prefix: generated.prefix,
      expires_at: options.expiresAt ? options.expiresAt.getTime() : null,
    });
    return {
      id: row.id,
      key: generated.key,
      prefix: generated.prefix,
      name: row.name,
      organizationId: row.organization_id,
      expiresAt: options.expiresAt ? options.expiresAt.toISOString() : null,
    };
  }

  /**
   * Finds the key by its hash and checks expiry against the database clock. A revoked key answers
   * like an unknown one: the caller learns nothing about keys that no longer work.
   */
  async authenticate(presented: string | undefined): Promise<AuthenticatedKey> {
    if (presented === undefined || presented.trim() === '') throw errors.apiKeyRequired();
    if (!presented.startsWith(KEY_PREFIX) || presented.length > 200) throw errors.invalidApiKey();
    const hash = hashApiKey(presented);
    let row;
    try {
      row = await this.keys.findByHash(hash);
    } catch (cause) {
      throw errors.storeUnavailable('database', cause);
    }
    if (!row || !timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(hash, 'hex'))) throw errors.invalidApiKey();
    if (row.revoked_at !== null) throw errors.invalidApiKey();
    if (row.expires_at !== null && row.expires_at <= row.db_now) throw errors.apiKeyExpired();
    this.keys.touch(row.id).catch(() => undefined);
    return {
      keyId: row.id,
      organizationId: row.organization_id,
      userId: row.user_id,
      // Keys created for an organization without a user are service keys: no membership to check.
      membershipActive: row.user_id === null ? true : Boolean(row.membership_active),
    };
  }

  list(organizationId: string): Promise<ApiKeyRow[]> {
    return this.keys.list(organizationId);
  }

  async revoke(id: string): Promise<void> {
    if (!(await this.keys.revoke(id))) throw new ApiError('INVALID_INPUT', `No active API key with id ${id}`);
  }
}

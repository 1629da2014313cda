import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError, errors } from '../errors.js';
import type { ApiKeyRepository, ApiKeyRow, KeyLookup } from '../store/api-key-repository.js';
import type { SigningSecrets } from './signing-secrets.js';
import type { FairShare } from '../capture/pool/fair-scheduler.js';
import { ignoreBecause } from '../ignore-error.js';

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
  /** The organization accepts only signed links and header keys (no `apiKey` in the query). */
  requireSignedLinks?: boolean;
  /** The plan's share of the browser (docs/render-slots.md), read with the key in the same query. */
  fairShare?: FairShare;
}

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  name: string;
  organizationId: string | null;
  expiresAt: string | null;
  /** Signs capture links (and webhooks); shown once, stored only encrypted. */
  signingSecret: string;
}

export class ApiKeyService {
  constructor(
    private readonly keys: ApiKeyRepository,
    readonly signingSecrets: SigningSecrets,
  ) {}

  async create(options: {
    organizationId: string | null;
    userId?: string | null;
    name: string;
    expiresAt?: Date | null;
  }): Promise<CreatedKey> {
    const generated = generateApiKey();
    let signingSecret = '';
    const row = await this.keys.insert(
      {
        organization_id: options.organizationId,
        user_id: options.userId ?? null,
        name: options.name,
        key_hash: generated.hash,
        prefix: generated.prefix,
        expires_at: options.expiresAt ? options.expiresAt.getTime() : null,
      },
      (id) => {
        const issued = this.signingSecrets.issue(id);
        signingSecret = issued.secret;
        return issued.sealed;
      },
    );
    return {
      id: row.id,
      key: generated.key,
      prefix: generated.prefix,
      name: row.name,
      organizationId: row.organization_id,
      expiresAt: options.expiresAt ? options.expiresAt.toISOString() : null,
      signingSecret,
    };
  }

  /** A new signing secret for an unrevoked key (links signed with the old one stop working). */
  async rotateSigningSecret(id: string): Promise<{ id: string; signingSecret: string }> {
    const issued = this.signingSecrets.issue(id);
    if (!(await this.keys.setSigningSecret(id, issued.sealed))) throw new ApiError('INVALID_INPUT', `No active API key with id ${id}`);
    return { id, signingSecret: issued.secret };
  }

  /** The key a signed link names, read with the database clock; undefined when unknown. */
  async findForSignedLink(keyId: string): Promise<KeyLookup | undefined> {
    if (keyId.length > 64) return undefined;
    try {
      return await this.keys.findById(keyId);
    } catch (cause) {
      throw errors.storeUnavailable('database', cause);
    }
  }

  /** The key's own states, the same for a presented key and a signed link. */
  accept(row: KeyLookup): AuthenticatedKey {
    if (row.revoked_at !== null) throw errors.invalidApiKey();
    if (row.expires_at !== null && row.expires_at <= row.db_now) throw errors.apiKeyExpired();
    this.keys.touch(row.id).catch(ignoreBecause('last use is a hint: a failed write is tried again by the next capture'));
    return {
      keyId: row.id,
      organizationId: row.organization_id,
      userId: row.user_id,
      // Keys created for an organization without a user are service keys: no membership to check.
      membershipActive: row.user_id === null ? true : Boolean(row.membership_active),
      requireSignedLinks: Boolean(row.require_signed_links),
      fairShare: {
        maxSharePercent:
          row.plan_max_share_percent === null || row.plan_max_share_percent === undefined ? null : Number(row.plan_max_share_percent),
        weight: Number(row.plan_fair_share_weight ?? 1),
        maxConcurrentCaptures:
          row.plan_max_concurrent_captures === null || row.plan_max_concurrent_captures === undefined
            ? null
            : Number(row.plan_max_concurrent_captures),
      },
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
    return this.accept(row);
  }

  list(organizationId: string): Promise<ApiKeyRow[]> {
    return this.keys.list(organizationId);
  }

  async revoke(id: string): Promise<void> {
    if (!(await this.keys.revoke(id))) throw new ApiError('INVALID_INPUT', `No active API key with id ${id}`);
  }
}

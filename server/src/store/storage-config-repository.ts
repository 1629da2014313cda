import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { SecretBox, StorageEncryptionError } from '../security/secret-box.js';
import type { StorageTarget } from './storage-target.js';
import { affected, type Database } from './database.js';

interface StorageConfigRow {
  id: string;
  organization_id: string;
  name: string;
  endpoint: string;
  bucket: string;
  region: string;
  access_key_id: string;
  secret_encrypted: string;
  is_default: number | boolean;
  force_path_style: number | boolean;
  created_at: number | string;
}

/** A storage configuration as shown to its owner: everything but the secret. */
export interface StorageConfigRecord {
  id: string;
  organizationId: string;
  name: string;
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  isDefault: boolean;
  forcePathStyle: boolean;
  createdAt: Date;
}

export interface NewStorageConfig {
  name: string;
  endpoint: string;
  bucket: string;
  /** Default: us-east-1. */
  region?: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Default: true when it is the organization's first configuration, else false. */
  isDefault?: boolean;
  /** Default: true (path-style URLs, which every S3-compatible server understands). */
  forcePathStyle?: boolean;
}

/** Changes to a configuration; an absent or empty `secretAccessKey` keeps the stored secret. */
export type StorageConfigChanges = Omit<NewStorageConfig, 'secretAccessKey' | 'isDefault'> & { secretAccessKey?: string };

/** A request the repository refuses; the message names the field and what is expected. */
export class StorageConfigError extends Error {}

const PUBLIC_COLUMNS = [
  'id',
  'organization_id',
  'name',
  'endpoint',
  'bucket',
  'region',
  'access_key_id',
  'is_default',
  'force_path_style',
  'created_at',
];

function toRecord(row: Omit<StorageConfigRow, 'secret_encrypted'>): StorageConfigRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    endpoint: row.endpoint,
    bucket: row.bucket,
    region: row.region,
    accessKeyId: row.access_key_id,
    isDefault: Boolean(row.is_default),
    forcePathStyle: Boolean(row.force_path_style),
    createdAt: new Date(Number(row.created_at)),
  };
}

/** The row a secret is bound to (AES-GCM associated data). */
const secretContext = (organizationId: string, id: string) => `storage_configs:${organizationId}:${id}`;

function checkNewConfig(config: NewStorageConfig) {
  const required = {
    name: config.name,
    endpoint: config.endpoint,
    bucket: config.bucket,
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
  };
  for (const [field, value] of Object.entries(required)) {
    if (typeof value !== 'string' || value.trim() === '') throw new StorageConfigError(`${field} is required`);
  }
  let url: URL;
  try {
    url = new URL(config.endpoint);
  } catch {
    throw new StorageConfigError('endpoint must be an absolute http:// or https:// URL, e.g. https://s3.eu-central-1.amazonaws.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new StorageConfigError('endpoint must be an http:// or https:// URL');
  if (url.username || url.password)
    throw new StorageConfigError('endpoint must not contain credentials; use accessKeyId and secretAccessKey');
  if (config.name.length > 200) throw new StorageConfigError('name must be at most 200 characters');
  if (config.endpoint.length > 2048) throw new StorageConfigError('endpoint must be at most 2048 characters');
  if (config.bucket.length > 255) throw new StorageConfigError('bucket must be at most 255 characters');
  if ((config.region ?? 'us-east-1').length > 64) throw new StorageConfigError('region must be at most 64 characters');
  if (config.accessKeyId.length > 256) throw new StorageConfigError('accessKeyId must be at most 256 characters');
}

/**
 * Storage configurations of organizations. Secrets are encrypted with STORAGE_ENCRYPTION_KEY and
 * leave this class only through the *Decrypted methods, which the capture pipeline uses to upload.
 * At most one configuration per organization is the default; setting one clears the others in the
 * same transaction. Deleting the default leaves the organization without one (uploads then need
 * per-request storage) rather than silently sending files to another bucket.
 */
export class StorageConfigRepository {
  constructor(
    private readonly db: Database,
    private readonly secrets: SecretBox | undefined,
  ) {}

  private get knex(): Knex {
    return this.db.knex;
  }

  private requireSecrets(): SecretBox {
    if (!this.secrets) {
      throw new StorageEncryptionError(
        'Storage configurations need STORAGE_ENCRYPTION_KEY (32 bytes as 64 hex characters or base64, e.g. `openssl rand -base64 32`) to encrypt their secrets; set it and restart',
      );
    }
    return this.secrets;
  }

  private byIdOrName(trx: Knex | Knex.Transaction, organizationId: string, idOrName: string) {
    return trx<StorageConfigRow>('storage_configs')
      .where('organization_id', organizationId)
      .andWhere((q) => {
        q.where('id', idOrName).orWhere('name', idOrName);
      });
  }

  async create(organizationId: string, config: NewStorageConfig): Promise<StorageConfigRecord> {
    checkNewConfig(config);
    const secrets = this.requireSecrets();
    const id = randomUUID();
    const endpoint = config.endpoint.replace(/\/+$/, '');
    return this.knex.transaction(async (trx) => {
      const existing = await trx('storage_configs').where('organization_id', organizationId).select('name', 'is_default');
      if (existing.some((row) => row.name === config.name))
        throw new StorageConfigError(`a storage configuration named "${config.name}" already exists`);
      const isDefault = config.isDefault ?? existing.length === 0;
      if (isDefault) await trx('storage_configs').where('organization_id', organizationId).update({ is_default: false });
      const row: StorageConfigRow = {
        id,
        organization_id: organizationId,
        name: config.name,
        endpoint,
        bucket: config.bucket,
        region: config.region ?? 'us-east-1',
        access_key_id: config.accessKeyId,
        secret_encrypted: secrets.encrypt(config.secretAccessKey, secretContext(organizationId, id)),
        is_default: isDefault,
        force_path_style: config.forcePathStyle ?? true,
        created_at: Date.now(),
      };
      await trx('storage_configs').insert(row);
      return toRecord(row);
    });
  }

  /**
   * Replaces the settings of a configuration; the default flag is left as it is, and the stored
   * secret is kept unless a new one is given. Undefined when there is no such configuration.
   */
  async update(organizationId: string, idOrName: string, changes: StorageConfigChanges): Promise<StorageConfigRecord | undefined> {
    const newSecret = changes.secretAccessKey !== undefined && changes.secretAccessKey !== '' ? changes.secretAccessKey : undefined;
    // The placeholder only satisfies the "required" check; it is never stored.
    checkNewConfig({ ...changes, secretAccessKey: newSecret ?? 'unchanged' });
    const secrets = newSecret === undefined ? undefined : this.requireSecrets();
    return this.knex.transaction(async (trx) => {
      const row = (await this.byIdOrName(trx, organizationId, idOrName).first(PUBLIC_COLUMNS)) as StorageConfigRow | undefined;
      if (!row) return undefined;
      const clash = await trx('storage_configs')
        .where({ organization_id: organizationId, name: changes.name })
        .whereNot('id', row.id)
        .first('id');
      if (clash) throw new StorageConfigError(`a storage configuration named "${changes.name}" already exists`);
      const fields = {
        name: changes.name,
        endpoint: changes.endpoint.replace(/\/+$/, ''),
        bucket: changes.bucket,
        region: changes.region ?? 'us-east-1',
        access_key_id: changes.accessKeyId,
        force_path_style: changes.forcePathStyle ?? Boolean(row.force_path_style),
        ...(secrets && newSecret !== undefined
          ? { secret_encrypted: secrets.encrypt(newSecret, secretContext(organizationId, row.id)) }
          : {}),
      };
      await trx('storage_configs').where({ organization_id: organizationId, id: row.id }).update(fields);
      return toRecord({ ...row, ...fields });
    });
  }

  async list(organizationId: string): Promise<StorageConfigRecord[]> {
    const rows = await this.knex('storage_configs').where('organization_id', organizationId).orderBy('created_at').select(PUBLIC_COLUMNS);
    return rows.map(toRecord);
  }

  async get(organizationId: string, idOrName: string): Promise<StorageConfigRecord | undefined> {
    const row = (await this.byIdOrName(this.knex, organizationId, idOrName).first(PUBLIC_COLUMNS)) as StorageConfigRow | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Makes one configuration the default and clears the flag on all others. False when not found. */
  async setDefault(organizationId: string, idOrName: string): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const row = await this.byIdOrName(trx, organizationId, idOrName).first('id');
      if (!row) return false;
      await trx('storage_configs').where('organization_id', organizationId).update({ is_default: false });
      await trx('storage_configs').where({ organization_id: organizationId, id: row.id }).update({ is_default: true });
      return true;
    });
  }

  async delete(organizationId: string, idOrName: string): Promise<boolean> {
    const deleted = await this.byIdOrName(this.knex, organizationId, idOrName).delete();
    return affected(deleted) > 0;
  }

  /** The organization's default configuration with its secret, or undefined when it has none. */
  async getDefaultDecrypted(organizationId: string): Promise<StorageTarget | undefined> {
    const row = await this.knex<StorageConfigRow>('storage_configs').where({ organization_id: organizationId, is_default: true }).first();
    return row ? this.decrypted(row) : undefined;
  }

  async getDecrypted(organizationId: string, idOrName: string): Promise<StorageTarget | undefined> {
    const row = await this.byIdOrName(this.knex, organizationId, idOrName).first();
    return row ? this.decrypted(row) : undefined;
  }

  private decrypted(row: StorageConfigRow): StorageTarget {
    const secretAccessKey = this.requireSecrets().decrypt(row.secret_encrypted, secretContext(row.organization_id, row.id));
    return {
      endpoint: row.endpoint,
      bucket: row.bucket,
      region: row.region,
      accessKeyId: row.access_key_id,
      secretAccessKey,
      forcePathStyle: Boolean(row.force_path_style),
      source: { kind: 'organization', name: row.name },
    };
  }
}

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
/** 32 bytes in standard or URL-safe base64, padding optional. */
const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;
const FORMAT_VERSION = 'v1';

/** The 32-byte key of STORAGE_ENCRYPTION_KEY (64 hex characters or base64), or undefined when malformed. */
export function parseEncryptionKey(value: string): Buffer | undefined {
  const text = value.trim();
  if (HEX_KEY.test(text)) return Buffer.from(text, 'hex');
  if (BASE64_KEY.test(text)) {
    const key = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    return key.length === 32 ? key : undefined;
  }
  return undefined;
}

export class StorageEncryptionError extends Error {}

/**
 * AES-256-GCM for storage secrets at rest. The associated data binds a ciphertext to its row
 * (organization and configuration id), so a secret copied into another row does not decrypt.
 * Stored form: `v1:<iv>:<tag>:<ciphertext>`, each part base64.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new StorageEncryptionError('the storage encryption key must be 32 bytes');
    this.key = key;
  }

  static fromSetting(value: string | undefined): SecretBox | undefined {
    if (value === undefined) return undefined;
    const key = parseEncryptionKey(value);
    if (!key) throw new StorageEncryptionError('STORAGE_ENCRYPTION_KEY must be 32 bytes written as 64 hex characters or as base64');
    return new SecretBox(key);
  }

  encrypt(plaintext: string, associatedData: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT_VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join(':');
  }

  decrypt(stored: string, associatedData: string): string {
    const [version, iv, tag, ciphertext] = stored.split(':');
    if (version !== FORMAT_VERSION || !iv || !tag || ciphertext === undefined) {
      throw new StorageEncryptionError('the stored storage secret has an unknown format');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new StorageEncryptionError(
        'the stored storage secret cannot be decrypted: STORAGE_ENCRYPTION_KEY differs from the key it was saved with',
      );
    }
  }
}

import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseEncryptionKey } from './secret-box.js';

export const SERVER_KEY_FILE_NAME = 'signing-secrets.key';

/**
 * The data folder of the embedded default: the SQLite file's folder, else ./data. The key file is
 * kept apart from the database rows, so a copy of the database alone cannot decrypt a secret.
 */
export function dataFolderOf(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path !== ':memory:') return dirname(resolve(path));
  }
  return resolve('data');
}

/**
 * The 32-byte server key that encrypts API keys' signing secrets at rest: SIGNING_SECRETS_KEY when
 * set (production, and every instance of a multi-instance deployment), else a key created on first
 * start in the data folder with owner-only permissions (0600) and read from there afterwards.
 */
export function loadServerKey(setting: string | undefined, databaseUrl: string): Buffer {
  if (setting !== undefined) {
    const key = parseEncryptionKey(setting);
    if (!key) throw new Error('SIGNING_SECRETS_KEY must be 32 bytes written as 64 hex characters or as base64');
    return key;
  }
  const folder = dataFolderOf(databaseUrl);
  const file = join(folder, SERVER_KEY_FILE_NAME);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  try {
    // 'wx' fails when the file exists: two processes starting together keep the first one's key.
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // An umask or a copy may have widened it: the key is readable by its owner only.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const key = parseEncryptionKey(readFileSync(file, 'utf8'));
  if (!key) throw new Error(`${file} does not hold a 32-byte key (64 hex characters); restore it or set SIGNING_SECRETS_KEY`);
  return key;
}

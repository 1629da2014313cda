import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/**
 * The demo key goes to a file only its owner can read: printed on stdout it ended up in
 * journals and container logs. It is written once per demo organization, that is once per new
 * database; a file left by an earlier database (whose key no longer works) is replaced, atomically
 * (written aside with mode 0600, then renamed), so the key is never readable by others, even briefly,
 * and a stale file never stops the service from starting.
 */
export async function writeDemoKeyFile(path: string, key: string): Promise<string> {
  const absolute = resolve(path);
  await mkdir(dirname(absolute), { recursive: true, mode: 0o700 });
  const aside = join(dirname(absolute), `.demo-key-${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(aside, `${key}\n`, { mode: 0o600, flag: 'wx' });
    await rename(aside, absolute);
  } catch (error) {
    await rm(aside, { force: true });
    throw error;
  }
  return absolute;
}

/**
 * The demo key's signing secret (signed links, webhook signatures), beside the key file and as
 * private: `demo-api-key.txt` → `demo-api-key.signing-secret.txt`. Without it the demo key's
 * webhooks could not be verified, since the secret is shown only once.
 */
export function demoSecretFilePath(keyFile: string): string {
  const absolute = resolve(keyFile);
  const name = absolute.slice(dirname(absolute).length + 1).replace(/\.txt$/, '');
  return join(dirname(absolute), `${name}.signing-secret.txt`);
}

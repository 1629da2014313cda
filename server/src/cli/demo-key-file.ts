import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/**
 * The demo key goes to a file only its owner can read (issue #15): printed on stdout it ended up in
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

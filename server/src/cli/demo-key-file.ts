import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * The demo key goes to a file only its owner can read, once (issue #15): printed on stdout it
 * ended up in journals and container logs. `wx` refuses to overwrite an existing file.
 */
export async function writeDemoKeyFile(path: string, key: string): Promise<string> {
  const absolute = resolve(path);
  await mkdir(dirname(absolute), { recursive: true, mode: 0o700 });
  await writeFile(absolute, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return absolute;
}

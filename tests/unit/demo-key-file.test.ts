import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoSecretFilePath, writeDemoKeyFile } from '../../server/src/cli/demo-key-file.js';

describe('demo key file', () => {
  it('is readable by its owner only, and replaces a file left by an earlier database', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'daguerre-demo-'));
    try {
      const path = await writeDemoKeyFile(join(dir, 'nested', 'demo-api-key.txt'), 'rs_demo_secret');
      expect((await readFile(path, 'utf8')).trim()).toBe('rs_demo_secret');
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      // A new database makes a new demo organization: its key replaces the stale one, still 0600.
      await writeDemoKeyFile(path, 'rs_other');
      expect((await readFile(path, 'utf8')).trim()).toBe('rs_other');
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect(await readdir(join(dir, 'nested'))).toEqual(['demo-api-key.txt']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("puts the demo key's signing secret beside the key file", () => {
    expect(demoSecretFilePath('/srv/data/demo-api-key.txt')).toBe('/srv/data/demo-api-key.signing-secret.txt');
  });
});

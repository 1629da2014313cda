import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeDemoKeyFile } from '../../server/src/cli/demo-key-file.js';

describe('demo key file (issue #15)', () => {
  it('is written once, readable by its owner only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rendershot-demo-'));
    try {
      const path = await writeDemoKeyFile(join(dir, 'nested', 'demo-api-key.txt'), 'rs_demo_secret');
      expect((await readFile(path, 'utf8')).trim()).toBe('rs_demo_secret');
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      await expect(writeDemoKeyFile(path, 'rs_other')).rejects.toThrow();
      expect((await readFile(path, 'utf8')).trim()).toBe('rs_demo_secret');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

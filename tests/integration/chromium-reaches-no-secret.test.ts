import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_USER } from '../../server/src/capture/browser/chromium-launch.js';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { descendantsOf } from '../helpers/process-tree.js';

/** Runs `command` as the user Chromium runs as, the way the service's wrapper drops to it. */
function asChromiumUser(command: string[]): { status: number | null; stderr: string } {
  const result = spawnSync('setpriv', [`--reuid=${CHROMIUM_USER}`, `--regid=${CHROMIUM_USER}`, '--clear-groups', ...command], {
    encoding: 'utf8',
  });
  return { status: result.status, stderr: result.stderr };
}

const ENCRYPTION_KEY = 'a'.repeat(64);

/**
 * docs/security.md: with the service started as root, Chromium runs as its own unprivileged user,
 * which cannot read the database file, its WAL, the data folder or the key files, and whose
 * environment holds none of the service's settings.
 */
describe('Chromium reaches none of the service secrets (service started as root)', () => {
  let root: string;
  let dataDir: string;
  let service: ChildService;

  beforeAll(async () => {
    expect(process.getuid?.()).toBe(0);
    root = mkdtempSync(join(tmpdir(), 'daguerre-private-'));
    // Open to everyone, so that only the service's own modes stand between Chromium's user and the data.
    chmodSync(root, 0o755);
    dataDir = join(root, 'data');
    service = await spawnService({
      DATABASE_URL: `sqlite:${join(dataDir, 'daguerre.db')}`,
      DEMO_KEY_FILE: join(dataDir, 'demo-api-key.txt'),
      STORAGE_ENCRYPTION_KEY: ENCRYPTION_KEY,
      DEMO_CREDITS: '10',
    });
  }, 90_000);

  afterAll(async () => {
    await service?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves a capture with Chromium under its own user, whose environment has none of the service settings', async () => {
    // `serve` prints its listening line a moment before it writes the demo key file.
    const keyFile = join(dataDir, 'demo-api-key.txt');
    for (let i = 0; i < 100 && !existsSync(keyFile); i++) await new Promise((r) => setTimeout(r, 50));
    const apiKey = readFileSync(keyFile, 'utf8').trim();
    const response = await fetch(
      `${service.url}/capture?html=${encodeURIComponent('<h1>private</h1>')}&viewportWidth=320&viewportHeight=200`,
      {
        headers: { 'X-API-Key': apiKey },
      },
    );
    expect(response.status).toBe(200);
    const chromium = descendantsOf(service.pid).filter((p) => p.cmdline.includes('chromium'));
    expect(chromium.length).toBeGreaterThan(1);
    const chromiumUid = Number(spawnSync('id', ['-u', CHROMIUM_USER], { encoding: 'utf8' }).stdout.trim());
    // Chromium starts and ends helper processes on its own (a spare renderer, utilities): one that
    // ended between the listing and the reading is no risk, and is passed over.
    const readIfAlive = (path: string) => {
      try {
        return readFileSync(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH') return undefined;
        throw error;
      }
    };
    let checked = 0;
    for (const { pid } of chromium) {
      const status = readIfAlive(`/proc/${pid}/status`);
      const environ = readIfAlive(`/proc/${pid}/environ`);
      if (status === undefined || environ === undefined) continue;
      checked += 1;
      expect(Number(/^Uid:\s+(\d+)/m.exec(status)![1])).toBe(chromiumUid);
      expect(environ).not.toContain(ENCRYPTION_KEY);
      expect(environ).not.toContain('DATABASE_URL');
      expect(environ).not.toContain(dataDir);
    }
    expect(checked).toBeGreaterThan(1);
  });

  it("Chromium's user can read neither the database file, its WAL, the data folder nor the key files", async () => {
    // Written by `serve` right after the key file.
    const secretFile = join(dataDir, 'demo-api-key.signing-secret.txt');
    for (let i = 0; i < 100 && !existsSync(secretFile); i++) await new Promise((r) => setTimeout(r, 50));
    const files = readdirSync(dataDir);
    // The demo key's signing secret is beside it, as private, in the Standard Webhooks form.
    expect(files).toEqual(
      expect.arrayContaining(['daguerre.db', 'daguerre.db-wal', 'demo-api-key.txt', 'demo-api-key.signing-secret.txt']),
    );
    expect(readFileSync(join(dataDir, 'demo-api-key.signing-secret.txt'), 'utf8')).toMatch(/^whsec_[A-Za-z0-9+/]{43}=\n$/);
    for (const file of files) {
      const denied = asChromiumUser(['cat', join(dataDir, file)]);
      expect(denied.status, file).not.toBe(0);
      expect(denied.stderr, file).toMatch(/Permission denied/);
    }
    const listing = asChromiumUser(['ls', dataDir]);
    expect(listing.status).not.toBe(0);
    expect(listing.stderr).toMatch(/Permission denied/);
    // The same command on a file it may read works: the denials above are the modes, not setpriv.
    expect(asChromiumUser(['cat', '/etc/hostname']).status).toBe(0);
  });
});

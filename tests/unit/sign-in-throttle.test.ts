import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_WINDOW_MS, SignInThrottle } from '../../server/src/dashboard/sign-in-throttle.js';
import { migrate, openDatabase, type Database } from '../../server/src/store/database.js';
import { SignInFailureRepository } from '../../server/src/store/sign-in-failure-repository.js';

/** The throttle on a real SQLite file (the same code runs on MariaDB: tests/integration/sign-in-throttle-shared.test.ts). */
describe('sign-in throttle in the database (issue #15)', () => {
  let dir: string;
  let db: Database;
  let failures: SignInFailureRepository;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rendershot-throttle-'));
    db = openDatabase(`sqlite:${join(dir, 'throttle.db')}`);
    await migrate(db);
    failures = new SignInFailureRepository(db);
  });
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a locked account locked through 5 001 junk failures from rotating addresses, and sweeps only expired rows', async () => {
    const throttle = new SignInThrottle(failures);
    const now = Date.now();
    for (let i = 0; i < 10; i += 1) await throttle.fail('victim@example.com', `198.51.100.${i}`, now);
    expect(await throttle.retryAfter('victim@example.com', '203.0.113.9', now)).toBeGreaterThan(0);
    // 5 001 junk failures from rotating addresses and emails: 10 002 entries, past the old in-memory
    // map's 10 000 at which it was cleared.
    for (let i = 0; i < 5_001; i += 1) await throttle.fail(`junk${i}@example.com`, `10.0.${(i >> 8) & 255}.${i & 255}`, now + 1);
    expect(await throttle.retryAfter('victim@example.com', '203.0.113.9', now + 3)).toBeGreaterThan(0);
    // A sweep a minute later deletes nothing still inside a window: the lock's rows stay.
    await throttle.fail('junk-later@example.com', '10.1.0.2', now + 61_000);
    expect(await failures.count()).toBe(10 + 10 + 10_002 + 2);
    expect(await throttle.retryAfter('victim@example.com', '203.0.113.9', now + 61_001)).toBeGreaterThan(0);
    // The lock ends when its window has passed, and then the table shrinks to the rows still in a window.
    expect(await throttle.retryAfter('victim@example.com', '203.0.113.9', now + SIGN_IN_WINDOW_MS + 1)).toBe(0);
    await throttle.fail('after@example.com', '10.1.0.3', now + SIGN_IN_WINDOW_MS + 62_000);
    expect(await failures.count()).toBe(2);
  }, 60_000);

  it('locks an address after 50 failures whatever the emails, and a success clears only the email', async () => {
    const throttle = new SignInThrottle(failures);
    const now = Date.now() + 10 * SIGN_IN_WINDOW_MS;
    for (let i = 0; i < 9; i += 1) await throttle.fail('someone@example.com', '192.0.2.1', now);
    await throttle.succeed('someone@example.com');
    expect(await throttle.retryAfter('someone@example.com', '192.0.2.2', now)).toBe(0);
    for (let i = 0; i < 41; i += 1) await throttle.fail(`other${i}@example.com`, '192.0.2.1', now);
    const wait = await throttle.retryAfter('fresh@example.com', '192.0.2.1', now + 1_000);
    expect(wait).toBe(SIGN_IN_WINDOW_MS - 1_000);
    expect(await throttle.retryAfter('fresh@example.com', '192.0.2.3', now + 1_000)).toBe(0);
  });

  it('stores digests, never the typed email or address', async () => {
    const throttle = new SignInThrottle(failures);
    await throttle.fail('typed-password-by-mistake', '198.18.0.7', Date.now() + 20 * SIGN_IN_WINDOW_MS);
    const dump = JSON.stringify(await db.knex('sign_in_failures').select('*'));
    expect(dump).not.toContain('typed-password-by-mistake');
    expect(dump).not.toContain('198.18.0.7');
  });
});

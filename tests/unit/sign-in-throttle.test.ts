import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_WINDOW_MS, SignInThrottle } from '../../server/src/dashboard/sign-in-throttle.js';
import { migrate, openDatabase, type Database } from '../../server/src/store/database.js';
import { SignInAttemptRepository } from '../../server/src/store/sign-in-attempt-repository.js';

/** The throttle on a real SQLite file (the same code runs on MariaDB: tests/integration/sign-in-throttle-shared.test.ts). */
describe('sign-in throttle in the database (issues #15, #28)', () => {
  let dir: string;
  let db: Database;
  let attempts: SignInAttemptRepository;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'daguerre-throttle-'));
    db = openDatabase(`sqlite:${join(dir, 'throttle.db')}`);
    await migrate(db);
    attempts = new SignInAttemptRepository(db);
  });
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets exactly 10 of 200 parallel attempts of one address at one email through, and not the attacker but the owner elsewhere', async () => {
    const throttle = new SignInThrottle(attempts);
    const now = Date.now();
    const waits = await Promise.all(Array.from({ length: 200 }, () => throttle.attempt('victim@example.com', '198.51.100.7', now)));
    expect(waits.filter((wait) => wait === 0)).toHaveLength(10);
    expect(Math.min(...waits.filter((wait) => wait > 0))).toBe(SIGN_IN_WINDOW_MS);
    // The owner, from another address, is not locked out; the attacker's address is, for this email.
    expect(await throttle.attempt('victim@example.com', '203.0.113.9', now + 1)).toBe(0);
    expect(await throttle.attempt('victim@example.com', '198.51.100.7', now + 2)).toBeGreaterThan(0);
    // The window ends: the attacker's address may try again.
    expect(await throttle.attempt('victim@example.com', '198.51.100.7', now + SIGN_IN_WINDOW_MS + 1)).toBe(0);
  });

  it('locks an address after 50 attempts over any emails, and a success gives the attempt back', async () => {
    const throttle = new SignInThrottle(attempts);
    const now = Date.now() + 10 * SIGN_IN_WINDOW_MS;
    for (let i = 0; i < 9; i += 1) expect(await throttle.attempt('someone@example.com', '192.0.2.1', now)).toBe(0);
    expect(await throttle.attempt('someone@example.com', '192.0.2.1', now)).toBe(0);
    await throttle.succeed('someone@example.com', '192.0.2.1');
    // The pair starts again after the right password.
    expect(await throttle.attempt('someone@example.com', '192.0.2.1', now)).toBe(0);
    for (let i = 0; i < 40; i += 1) expect(await throttle.attempt(`other${i}@example.com`, '192.0.2.1', now)).toBe(0);
    expect(await throttle.attempt('fresh@example.com', '192.0.2.1', now + 1_000)).toBe(SIGN_IN_WINDOW_MS - 1_000);
    expect(await throttle.attempt('fresh@example.com', '192.0.2.3', now + 1_000)).toBe(0);
  });

  it('stops guesses spread over many addresses with the email budget (200 an hour)', async () => {
    const throttle = new SignInThrottle(attempts);
    const now = Date.now() + 20 * SIGN_IN_WINDOW_MS;
    for (let i = 0; i < 200; i += 1) expect(await throttle.attempt('spread@example.com', `10.9.${i >> 4}.${i & 15}`, now)).toBe(0);
    expect(await throttle.attempt('spread@example.com', '10.10.0.1', now)).toBeGreaterThan(0);
  });

  it('stores digests, never the typed email or address, and sweeps only rows whose window has ended', async () => {
    const throttle = new SignInThrottle(attempts);
    const now = Date.now() + 40 * SIGN_IN_WINDOW_MS;
    await throttle.attempt('typed-password-by-mistake', '198.18.0.7', now);
    const dump = JSON.stringify(await db.knex('sign_in_attempts').select('*'));
    expect(dump).not.toContain('typed-password-by-mistake');
    expect(dump).not.toContain('198.18.0.7');
    // An hour and more later the sweep leaves the new attempt's three rows only.
    await new SignInThrottle(attempts).attempt('later@example.com', '198.18.0.8', now + 61 * 60_000);
    expect(await attempts.count()).toBe(3);
  });
});

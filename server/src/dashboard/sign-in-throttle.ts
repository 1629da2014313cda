import { SignInFailureRepository } from '../store/sign-in-failure-repository.js';

export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_EMAIL = 10;
export const MAX_FAILURES_PER_ADDRESS = 50;
/** Expired rows are swept at most this often per instance (the sweep is one indexed DELETE). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Slows down password guessing: after 10 failed sign-ins for one email (or 50 from one address)
 * in 15 minutes, further attempts are refused until the window has passed; scrypt already makes
 * every guess cost about 100 ms of CPU. The failures live in the database (issue #15), so every
 * instance sharing it sees the same lock, and nothing is ever dropped before its window has passed:
 * the table is bounded by deleting expired rows only, and a locked subject gets no new rows (its
 * attempts are refused before the password is checked), so a flood of junk failures can only add
 * rows of its own, never push a lock out.
 */
export class SignInThrottle {
  private lastSweep = 0;

  constructor(private readonly failures: SignInFailureRepository) {}

  private static subjects(email: string, address: string): Array<[string, number]> {
    return [
      [SignInFailureRepository.subject('email', email), MAX_FAILURES_PER_EMAIL],
      [SignInFailureRepository.subject('address', address), MAX_FAILURES_PER_ADDRESS],
    ];
  }

  /** Milliseconds until the next attempt is allowed; 0 when allowed now. */
  async retryAfter(email: string, address: string, now = Date.now()): Promise<number> {
    let wait = 0;
    for (const [subject, max] of SignInThrottle.subjects(email, address)) {
      const oldestCounted = await this.failures.nthMostRecent(subject, max, now - SIGN_IN_WINDOW_MS);
      if (oldestCounted !== undefined) wait = Math.max(wait, oldestCounted + SIGN_IN_WINDOW_MS - now);
    }
    return wait;
  }

  async fail(email: string, address: string, now = Date.now()): Promise<void> {
    await this.failures.record(SignInThrottle.subjects(email, address).map(([subject]) => subject), now);
    if (now - this.lastSweep >= SWEEP_EVERY_MS) {
      this.lastSweep = now;
      await this.failures.deleteExpired(now - SIGN_IN_WINDOW_MS);
    }
  }

  /** A successful sign-in clears the email's failures (not the address's: one good password does not vouch for the rest). */
  async succeed(email: string): Promise<void> {
    await this.failures.forget(SignInFailureRepository.subject('email', email));
  }
}

import { SignInAttemptRepository } from '../store/sign-in-attempt-repository.js';

/** A budget of sign-in attempts: at most `max` per `windowMs` for one subject. */
export interface SignInBudget {
  kind: 'pair' | 'address' | 'email';
  max: number;
  windowMs: number;
}

export const SIGN_IN_WINDOW_MS = 15 * 60_000;
/**
 * The budgets every attempt takes from, in this order (docs/containment.md, "Dashboard sign-in
 * throttle"). The attacker is the email and address together: one address guessing one account is
 * stopped after 10, and the account's owner, coming from anywhere else, is not. One address may try
 * 50 attempts over all emails. The email's own budget is the slow global one: it stops guesses
 * spread over many addresses (200 an hour); only an attacker with 20 addresses can lock the owner
 * out, for the rest of that hour.
 */
export const SIGN_IN_BUDGETS: readonly SignInBudget[] = [
  { kind: 'pair', max: 10, windowMs: SIGN_IN_WINDOW_MS },
  { kind: 'address', max: 50, windowMs: SIGN_IN_WINDOW_MS },
  { kind: 'email', max: 200, windowMs: 60 * 60_000 },
];
/** Expired rows are swept at most this often per instance (the sweep is one indexed DELETE). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Slows down password guessing: an attempt takes one from each budget before its password is
 * checked (scrypt, ~100 ms), each take one atomic statement in the shared database, so that parallel
 * guesses cannot pass a check together and every instance sees the same counts. A budget that
 * refuses ends the attempt there (the later budgets are not spent); a sign-in that succeeds gives
 * its attempt back.
 */
export class SignInThrottle {
  private lastSweep = 0;

  constructor(
    private readonly attempts: SignInAttemptRepository,
    private readonly budgets: readonly SignInBudget[] = SIGN_IN_BUDGETS,
  ) {}

  private static subject(kind: SignInBudget['kind'], email: string, address: string): string {
    const value = kind === 'pair' ? `${email}\n${address}` : kind === 'email' ? email : address;
    return SignInAttemptRepository.subject(kind, value);
  }

  /** Takes an attempt: 0 when the password may be checked now, else the milliseconds to wait. */
  async attempt(email: string, address: string, now = Date.now()): Promise<number> {
    if (now - this.lastSweep >= SWEEP_EVERY_MS) {
      this.lastSweep = now;
      await this.attempts.deleteExpired(now - Math.max(...this.budgets.map((b) => b.windowMs)));
    }
    for (const budget of this.budgets) {
      const wait = await this.attempts.take(SignInThrottle.subject(budget.kind, email, address), budget.max, budget.windowMs, now);
      if (wait > 0) return wait;
    }
    return 0;
  }

  /** The right password: this address's budget for the email starts again, and the other budgets get the attempt back. */
  async succeed(email: string, address: string): Promise<void> {
    for (const budget of this.budgets) {
      const subject = SignInThrottle.subject(budget.kind, email, address);
      if (budget.kind === 'pair') await this.attempts.forget(subject);
      else await this.attempts.giveBack(subject);
    }
  }
}

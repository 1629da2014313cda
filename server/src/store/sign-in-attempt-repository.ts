import { createHash } from 'node:crypto';
import type { Database } from './database.js';

const TABLE = 'sign_in_attempts';

/**
 * Dashboard sign-in attempts counted per subject (an email, an address, or both together) in the
 * database every instance shares (docs/containment.md). A row per failure, as before, was checked
 * before the password and written after it, so parallel guesses all passed the check. One row per
 * subject holds the start of its window and the attempts in it. take() counts and checks in one
 * UPDATE whose WHERE clause is the limit: the database serializes it per row (SQLite's single
 * writer, InnoDB's row lock), so no number of parallel attempts can take more than the limit.
 * Subjects are stored as SHA-256 digests: people type passwords into the email field, and the table
 * needs equality only.
 */
export class SignInAttemptRepository {
  constructor(private readonly db: Database) {}

  static subject(kind: string, value: string): string {
    return createHash('sha256').update(`${kind}:${value}`, 'utf8').digest('hex');
  }

  /**
   * Takes one attempt of the subject's budget of `max` per `windowMs`: 0 when taken, else the
   * milliseconds until its window ends. A window that has ended starts again at `now`.
   */
  async take(subject: string, max: number, windowMs: number, now: number): Promise<number> {
    const knex = this.db.knex;
    const cutoff = now - windowMs;
    // MySQL evaluates SET clauses left to right: `attempts` first, while window_start is still the old one.
    const tryTake = async () =>
      (await knex(TABLE)
        .where('subject', subject)
        .andWhere((q) => {
          q.where('window_start', '<=', cutoff).orWhere('attempts', '<', max);
        })
        .update({
          attempts: knex.raw('CASE WHEN window_start <= ? THEN 1 ELSE attempts + 1 END', [cutoff]),
          window_start: knex.raw('CASE WHEN window_start <= ? THEN ? ELSE window_start END', [cutoff, now]),
        })) === 1;
    if (await tryTake()) return 0;
    // No row yet (or one at its limit): a row with no attempts, then the same atomic step decides.
    await knex(TABLE).insert({ subject, window_start: now, attempts: 0 }).onConflict('subject').ignore();
    if (await tryTake()) return 0;
    const row = await knex(TABLE).where('subject', subject).first('window_start');
    return Math.max(1, Number(row?.window_start ?? now) + windowMs - now);
  }

  /** Gives one attempt back (a sign-in that succeeded). */
  async giveBack(subject: string): Promise<void> {
    await this.db.knex(TABLE).where('subject', subject).andWhere('attempts', '>', 0).decrement('attempts', 1);
  }

  async forget(subject: string): Promise<void> {
    await this.db.knex(TABLE).where('subject', subject).delete();
  }

  /** Rows whose window started at or before `cutoff`: no budget depends on them any more. */
  async deleteExpired(cutoff: number): Promise<number> {
    return this.db.knex(TABLE).where('window_start', '<=', cutoff).delete();
  }

  async attempts(subject: string): Promise<number> {
    const row = await this.db.knex(TABLE).where('subject', subject).first('attempts');
    return Number(row?.attempts ?? 0);
  }

  async count(): Promise<number> {
    const row = await this.db.knex(TABLE).count<{ n: number }[]>({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }
}

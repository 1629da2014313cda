import { createHash } from 'node:crypto';
import type { Database } from './database.js';

/**
 * Failed dashboard sign-ins, one row per failure and subject (an email or a client address), in the
 * database every instance shares, so a lock holds whichever instance the next attempt reaches.
 * Subjects are stored as SHA-256 digests: people type passwords into the email field, and the table
 * needs equality only.
 */
export class SignInFailureRepository {
  constructor(private readonly db: Database) {}

  static subject(kind: 'email' | 'address', value: string): string {
    return createHash('sha256').update(`${kind}:${value}`, 'utf8').digest('hex');
  }

  async record(subjects: string[], at: number): Promise<void> {
    await this.db.knex('sign_in_failures').insert(subjects.map((subject) => ({ subject, failed_at: at })));
  }

  /**
   * The time of the `nth` most recent failure of the subject after `since`, or undefined when it
   * has fewer: with n = the limit, the subject is locked until that time plus the window.
   */
  async nthMostRecent(subject: string, nth: number, since: number): Promise<number | undefined> {
    const row = await this.db
      .knex('sign_in_failures')
      .where('subject', subject)
      .andWhere('failed_at', '>', since)
      .orderBy('failed_at', 'desc')
      .offset(nth - 1)
      .first('failed_at');
    return row ? Number(row.failed_at) : undefined;
  }

  async forget(subject: string): Promise<void> {
    await this.db.knex('sign_in_failures').where('subject', subject).delete();
  }

  /** Rows of failures at or before `cutoff`: outside every window, so no lock depends on them. */
  async deleteExpired(cutoff: number): Promise<number> {
    return this.db.knex('sign_in_failures').where('failed_at', '<=', cutoff).delete();
  }

  async count(): Promise<number> {
    const row = await this.db.knex('sign_in_failures').count<{ n: number }[]>({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }
}

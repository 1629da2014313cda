import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { affected, type Database } from './database.js';

export interface SessionRecord {
  id: string;
  userId: string;
  userEmail: string;
  userName: string;
  /** The organization the session acts for; null when the user belongs to none. */
  organizationId: string | null;
  csrfToken: string;
  flash: string | null;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

export interface MembershipRecord {
  organizationId: string;
  organizationName: string;
  role: string;
  active: boolean;
}

export interface SessionTimes {
  /** Sliding: a session unused for this long ends. */
  idleMs: number;
  /** Absolute: no session lives longer than this after sign-in. */
  absoluteMs: number;
}

/** The token the browser holds; only its SHA-256 is stored. */
export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Dashboard sessions and what a signed-in user may act for. Tokens are 256-bit random values, so an
 * unsalted hash is enough; lookups compare the hash in SQL and check expiry with the database clock.
 */
export class SessionRepository {
  constructor(
    private readonly db: Database,
    private readonly times: SessionTimes,
  ) {}

  /** How long a session can live at most (the cookie's Max-Age). */
  get absoluteMs(): number {
    return this.times.absoluteMs;
  }

  async create(userId: string, organizationId: string | null, now = Date.now()): Promise<{ token: string; session: SessionRecord }> {
    const token = randomBytes(32).toString('base64url');
    const row = {
      id: randomUUID(),
      token_hash: hashSessionToken(token),
      user_id: userId,
      organization_id: organizationId,
      csrf_token: randomBytes(32).toString('base64url'),
      flash: null,
      created_at: now,
      last_seen_at: now,
      expires_at: now + Math.min(this.times.idleMs, this.times.absoluteMs),
    };
    await this.db.knex('dashboard_sessions').insert(row);
    const session = await this.findByToken(token);
    if (!session) throw new Error('the session just created cannot be read back');
    return { token, session };
  }

  /** The live session for a cookie's token, or undefined when unknown or expired. */
  async findByToken(token: string): Promise<SessionRecord | undefined> {
    if (token.length === 0 || token.length > 100) return undefined;
    const row = await this.db
      .knex('dashboard_sessions as s')
      .join('users as u', 'u.id', 's.user_id')
      .where('s.token_hash', hashSessionToken(token))
      .andWhere('s.expires_at', '>', this.db.nowMs())
      .first('s.*', 'u.email as user_email', 'u.name as user_name');
    if (!row) return undefined;
    return {
      id: row.id,
      userId: row.user_id,
      userEmail: row.user_email,
      userName: row.user_name,
      organizationId: row.organization_id,
      csrfToken: row.csrf_token,
      flash: row.flash,
      createdAt: Number(row.created_at),
      lastSeenAt: Number(row.last_seen_at),
      expiresAt: Number(row.expires_at),
    };
  }

  /** Moves the idle expiry forward, never past the absolute limit. Written at most once a minute. */
  async touch(session: SessionRecord, now = Date.now()): Promise<void> {
    if (now - session.lastSeenAt < 60_000) return;
    const expiresAt = Math.min(now + this.times.idleMs, session.createdAt + this.times.absoluteMs);
    await this.db.knex('dashboard_sessions').where('id', session.id).update({ last_seen_at: now, expires_at: expiresAt });
  }

  async setOrganization(sessionId: string, organizationId: string): Promise<void> {
    await this.db.knex('dashboard_sessions').where('id', sessionId).update({ organization_id: organizationId });
  }

  async setFlash(sessionId: string, flash: string | null): Promise<void> {
    await this.db.knex('dashboard_sessions').where('id', sessionId).update({ flash });
  }

  /** Reads and clears the flash in one step: of two concurrent requests only one gets it. */
  async takeFlash(sessionId: string, seen: string): Promise<boolean> {
    const cleared = await this.db.knex('dashboard_sessions').where({ id: sessionId, flash: seen }).update({ flash: null });
    return affected(cleared) === 1;
  }

  async delete(sessionId: string): Promise<void> {
    await this.db.knex('dashboard_sessions').where('id', sessionId).delete();
  }

  /** Removes expired rows; called on sign-in so the table does not grow without bound. */
  async deleteExpired(): Promise<number> {
    return affected(await this.db.knex('dashboard_sessions').where('expires_at', '<=', this.db.nowMs()).delete());
  }

  /** The user's memberships, oldest first (the first active one is the default organization). */
  async memberships(userId: string): Promise<MembershipRecord[]> {
    const rows = await this.db
      .knex('memberships as m')
      .join('organizations as o', 'o.id', 'm.organization_id')
      .where('m.user_id', userId)
      .orderBy([{ column: 'm.created_at' }, { column: 'o.name' }])
      .select('m.organization_id', 'o.name', 'm.role', 'm.active');
    return rows.map((row) => ({
      organizationId: row.organization_id,
      organizationName: row.name,
      role: row.role,
      active: Boolean(row.active),
    }));
  }
}

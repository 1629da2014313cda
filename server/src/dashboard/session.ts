import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CookieOptions, Request, RequestHandler, Response } from 'express';
import { handle, type AsyncHandler } from '../async-handler.js';
import type { MembershipRecord, SessionRecord, SessionRepository } from '../store/session-repository.js';

export const SESSION_COOKIE = 'daguerre_session';
/** Double-submit token of the sign-in form, which has no session yet to hold a synchronizer token. */
export const SIGN_IN_COOKIE = 'daguerre_signin';
export const CSRF_FIELD = '_csrf';
export const DASHBOARD_PATH = '/dashboard';

/** A one-shot message shown on the next page; `newKey` is how a created key is shown exactly once. */
export interface Flash {
  kind: 'success' | 'error';
  message: string;
  /** Which item the message belongs to (a storage configuration's id), to show it in place. */
  about?: string;
  newKey?: { name: string; value: string; id?: string; signingSecret?: string };
  /** A rotated signing secret, shown exactly once like a new key. */
  newSecret?: { name: string; id: string; signingSecret: string };
  /** The dashboard path (after /dashboard) that shows it; other pages leave it for that one. */
  page: string;
}

/** What every signed-in dashboard request knows, in `res.locals.dashboard`. */
export interface DashboardContext {
  session: SessionRecord;
  token: string;
  memberships: MembershipRecord[];
  /** The membership the session acts for; undefined when the user belongs to no organization. */
  membership: MembershipRecord | undefined;
  flash: Flash | undefined;
}

export function dashboardContext(res: Response): DashboardContext {
  const context = res.locals.dashboard as DashboardContext | undefined;
  if (!context) throw new Error('dashboard route used without the session middleware');
  return context;
}

/** The one organization a page may act for; the membership gate has already checked it is active. */
export function organizationOf(res: Response): MembershipRecord {
  const { membership } = dashboardContext(res);
  if (!membership?.active) throw new Error('dashboard route used without the membership gate');
  return membership;
}

export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== name) continue;
    const value = part.slice(at + 1).trim();
    try {
      return decodeURIComponent(value.replace(/^"|"$/g, ''));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** HttpOnly, SameSite=Lax, Secure whenever the request came over HTTPS (directly or, with TRUST_PROXY, via the proxy). */
export function cookieOptions(req: Request, maxAgeMs?: number): CookieOptions {
  return { httpOnly: true, secure: req.secure, sameSite: 'lax', path: DASHBOARD_PATH, ...(maxAgeMs ? { maxAge: maxAgeMs } : {}) };
}

export function sameToken(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string' || presented.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(presented), Buffer.from(expected));
}

export const newToken = () => randomBytes(32).toString('base64url');

/**
 * Flash messages are stored on the session row, sealed with a key derived from the session token
 * (which only the browser holds): a new key's value passes through the database for one redirect
 * but is unreadable there.
 */
function flashKey(token: string): Buffer {
  return createHmac('sha256', token).update('daguerre dashboard flash v1').digest();
}

export function sealFlash(token: string, flash: Flash): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', flashKey(token), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(flash), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

export function openFlash(token: string, sealed: string): Flash | undefined {
  try {
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', flashKey(token), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')) as Flash;
  } catch {
    return undefined;
  }
}

export async function setFlash(sessions: SessionRepository, res: Response, flash: Flash): Promise<void> {
  const { session, token } = dashboardContext(res);
  await sessions.setFlash(session.id, sealFlash(token, flash));
}

/** Only local dashboard paths are followed after sign-in (no open redirect). */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || !next.startsWith(`${DASHBOARD_PATH}/`) || next.startsWith('//') || /[\\\s]/.test(next)) {
    return `${DASHBOARD_PATH}/usage`;
  }
  return next;
}

// The dashboard's routes take `handle` from here, as before it moved down for the MCP and ops routes.
export { handle, type AsyncHandler };

/**
 * Loads the session named by the cookie, its memberships and the organization it acts for (the
 * one chosen earlier if still a membership, else the first active one), and takes the flash.
 * Requests without a live session go to the sign-in page.
 */
export function loadSession(sessions: SessionRepository): RequestHandler {
  return handle(async (req, res, next) => {
    const token = readCookie(req, SESSION_COOKIE);
    const session = token ? await sessions.findByToken(token) : undefined;
    if (!token || !session) {
      if (token) res.clearCookie(SESSION_COOKIE, cookieOptions(req));
      const next = req.method === 'GET' ? `?next=${encodeURIComponent(req.originalUrl)}` : '';
      res.redirect(303, `${DASHBOARD_PATH}/sign-in${next}`);
      return;
    }
    const memberships = await sessions.memberships(session.userId);
    let membership = memberships.find((m) => m.organizationId === session.organizationId);
    if (!membership) {
      membership = memberships.find((m) => m.active) ?? memberships[0];
      if (membership) await sessions.setOrganization(session.id, membership.organizationId);
    }
    // Taken only by the page it is for, so a page loaded in another tab cannot swallow a new key.
    let flash: Flash | undefined;
    if (req.method === 'GET' && session.flash) {
      const opened = openFlash(token, session.flash);
      if (!opened || opened.page === req.path) {
        if ((await sessions.takeFlash(session.id, session.flash)) && opened) flash = opened;
      }
    }
    await sessions.touch(session);
    const context: DashboardContext = { session, token, memberships, membership, flash };
    res.locals.dashboard = context;
    next();
  });
}

/** The synchronizer token: every POST of a signed-in user carries the session's `_csrf`. */
export function requireCsrfToken(onRefused: (req: Request, res: Response) => void): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'POST') return next();
    const { session } = dashboardContext(res);
    const presented = (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
    if (!sameToken(presented, session.csrfToken)) return onRefused(req, res);
    next();
  };
}

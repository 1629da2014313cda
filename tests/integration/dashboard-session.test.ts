import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { mountDashboard } from '../../server/src/dashboard/index.js';
import { escapeHtml, html } from '../../server/src/dashboard/html.js';
import { parseKeyForm } from '../../server/src/dashboard/keys-routes.js';
import { openFlash, safeNext, sealFlash } from '../../server/src/dashboard/session.js';
import { openDataLayer, type DataLayer } from '../../server/src/runtime.js';
import { hashPassword } from '../../server/src/services/passwords.js';
import { hashSessionToken, SessionRepository } from '../../server/src/store/session-repository.js';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/databases.js';

const PASSWORD = 'a long enough password';

describe('dashboard templates and helpers', () => {
  it('escapes every interpolated value unless it is itself a template', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
    const name = '"><script>alert(1)</script>';
    expect(html`<input value="${name}">`.value).toBe('<input value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">');
    expect(html`<ul>${['<b>', html`<li>${'&'}</li>`]}</ul>`.value).toBe('<ul>&lt;b&gt;<li>&amp;</li></ul>');
    expect(html`${false}${null}${undefined}${0}`.value).toBe('0');
  });

  it('follows only local dashboard paths after sign-in', () => {
    expect(safeNext('/dashboard/keys')).toBe('/dashboard/keys');
    for (const next of ['//evil.example/dashboard/', 'https://evil.example/', '/dashboard', '/docs', '/dashboard/\\evil', undefined, 42]) {
      expect(safeNext(next)).toBe('/dashboard/usage');
    }
  });

  it('seals flashes with the session token: unreadable without it', () => {
    const sealed = sealFlash('token-a', {
      kind: 'success',
      message: 'created',
      newKey: { name: 'k', value: 'rs_secret_value' },
      page: '/keys',
    });
    expect(sealed).not.toContain('rs_secret_value');
    expect(Buffer.from(sealed, 'base64url').toString('utf8')).not.toContain('rs_secret');
    expect(openFlash('token-a', sealed)?.newKey?.value).toBe('rs_secret_value');
    expect(openFlash('token-b', sealed)).toBeUndefined();
  });

  it('checks the key form: a name, and an expiry date in the future', () => {
    const now = Date.UTC(2030, 4, 10, 12);
    expect(parseKeyForm({ name: ' ', expires: '' }, now).errors.name).toBe('Give the key a name.');
    expect(parseKeyForm({ name: 'k', expires: '2030-05-10' }, now).errors.expires).toBe(
      'The expiry date must be in the future (2030-05-11 or later).',
    );
    expect(parseKeyForm({ name: 'k', expires: '2030-02-30' }, now).errors.expires).toBe('Enter a date as YYYY-MM-DD.');
    expect(parseKeyForm({ name: 'k', expires: '2030-05-11' }, now)).toEqual({
      errors: {},
      expiresAt: new Date('2030-05-11T00:00:00.000Z'),
    });
    expect(parseKeyForm({ name: 'k', expires: '' }, now)).toEqual({ errors: {}, expiresAt: null });
  });
});

describe.each(DATABASE_KINDS)('dashboard sessions in the database (%s)', (kind) => {
  let database: TestDatabase;
  let data: DataLayer;
  let userId: string;
  let orgIds: string[];

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    data = await openDataLayer(loadConfig({}, { DATABASE_URL: database.url, STORAGE_ENCRYPTION_KEY: randomBytes(32).toString('hex') }));
    const plan = await data.accounts.createPlan({ name: 'p', tier: 't', creditsPerMonth: 5 });
    const first = await data.accounts.createOrganization('Alpha', plan);
    const second = await data.accounts.createOrganization('Beta', plan);
    orgIds = [first.id, second.id];
    userId = (await data.accounts.createUser('s@example.test', 'S')).id;
    await data.accounts.addMember(first.id, userId);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await data.accounts.addMember(second.id, userId, 'owner');
    await data.accounts.setMembershipActive(first.id, userId, false);
  });
  afterAll(async () => {
    await data?.db.close();
    await database?.drop();
  });

  it('stores the hash of the token, finds live sessions only, and slides within the absolute limit', async () => {
    const sessions = new SessionRepository(data.db, { idleMs: 60 * 60_000, absoluteMs: 2 * 60 * 60_000 });
    const created = await sessions.create(userId, orgIds[1]!);
    const row = await data.db.knex('dashboard_sessions').where('id', created.session.id).first();
    expect(row.token_hash).toBe(hashSessionToken(created.token));
    expect(JSON.stringify(row)).not.toContain(created.token);
    expect((await sessions.findByToken(created.token))?.userEmail).toBe('s@example.test');
    expect(await sessions.findByToken(`${created.token}x`)).toBeUndefined();

    // An hour and a half later the idle expiry moves, but never past two hours after sign-in.
    const later = created.session.createdAt + 90 * 60_000;
    await sessions.touch(created.session, later);
    const touched = await data.db.knex('dashboard_sessions').where('id', created.session.id).first();
    expect(Number(touched.expires_at)).toBe(created.session.createdAt + 2 * 60 * 60_000);

    // Expired sessions are not found and are cleaned up.
    await data.db
      .knex('dashboard_sessions')
      .where('id', created.session.id)
      .update({ expires_at: Date.now() - 1_000 });
    expect(await sessions.findByToken(created.token)).toBeUndefined();
    expect(await sessions.deleteExpired()).toBeGreaterThanOrEqual(1);
    expect(await data.db.knex('dashboard_sessions').where('id', created.session.id)).toHaveLength(0);
  });

  it('hands out a flash once, and lists memberships oldest first with their state', async () => {
    const sessions = new SessionRepository(data.db, { idleMs: 60_000, absoluteMs: 60_000 });
    const { session } = await sessions.create(userId, null);
    await sessions.setFlash(session.id, 'sealed');
    expect(await sessions.takeFlash(session.id, 'sealed')).toBe(true);
    expect(await sessions.takeFlash(session.id, 'sealed')).toBe(false);
    expect(await sessions.memberships(userId)).toEqual([
      { organizationId: orgIds[0], organizationName: 'Alpha', role: 'member', active: false },
      { organizationId: orgIds[1], organizationName: 'Beta', role: 'owner', active: true },
    ]);
  });

  it('edits a storage configuration: keeps the secret when none is given, refuses a taken name, keeps the default flag', async () => {
    const org = orgIds[0]!;
    const settings = { endpoint: 'http://127.0.0.1:9', bucket: 'b', region: 'us-east-1', accessKeyId: 'AK' };
    const first = await data.storageConfigs.create(org, { ...settings, name: 'one', secretAccessKey: 'secret-1' });
    await data.storageConfigs.create(org, { ...settings, name: 'two', secretAccessKey: 'secret-2' });

    const renamed = await data.storageConfigs.update(org, first.id, { ...settings, name: 'uno', bucket: 'b2', secretAccessKey: '' });
    expect(renamed).toMatchObject({ id: first.id, name: 'uno', bucket: 'b2', isDefault: true });
    expect((await data.storageConfigs.getDecrypted(org, first.id))?.secretAccessKey).toBe('secret-1');

    await data.storageConfigs.update(org, first.id, { ...settings, name: 'uno', secretAccessKey: 'secret-new' });
    expect((await data.storageConfigs.getDecrypted(org, first.id))?.secretAccessKey).toBe('secret-new');

    await expect(data.storageConfigs.update(org, first.id, { ...settings, name: 'two' })).rejects.toThrow(
      'a storage configuration named "two" already exists',
    );
    await expect(data.storageConfigs.update(org, first.id, { ...settings, name: 'uno', endpoint: 'ftp://x' })).rejects.toThrow(
      'endpoint must be an http:// or https:// URL',
    );
    expect(await data.storageConfigs.update(orgIds[1]!, first.id, { ...settings, name: 'elsewhere' })).toBeUndefined();
  });
});

describe('dashboard cookies and transport (no browser)', () => {
  let database: TestDatabase;
  let data: DataLayer;
  let server: Server;
  let base: string;
  let httpsOnlyServer: Server;
  let httpsOnlyBase: string;

  async function listen(app: express.Express): Promise<[Server, string]> {
    const s = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => s.once('listening', resolve));
    return [s, `http://127.0.0.1:${(s.address() as AddressInfo).port}`];
  }

  function appWith(requireHttps: boolean) {
    const app = express();
    app.set('trust proxy', true);
    mountDashboard(app, {
      data,
      logger: pino({ level: 'silent' }),
      config: { REQUIRE_HTTPS: requireHttps, STORAGE_ENCRYPTION_KEY: undefined },
    });
    return app;
  }

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    data = await openDataLayer(loadConfig({}, { DATABASE_URL: database.url }));
    const plan = await data.accounts.createPlan({ name: 'p', tier: 't', creditsPerMonth: 5 });
    const org = await data.accounts.createOrganization('Org', plan);
    const user = await data.accounts.createUser('c@example.test', 'C', await hashPassword(PASSWORD));
    await data.accounts.addMember(org.id, user.id);
    [server, base] = await listen(appWith(false));
    [httpsOnlyServer, httpsOnlyBase] = await listen(appWith(true));
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await new Promise((resolve) => httpsOnlyServer?.close(resolve));
    await data?.db.close();
    await database?.drop();
  });

  async function signIn(root: string, password: string, headers: Record<string, string> = {}) {
    const form = await fetch(`${root}/dashboard/sign-in`, { headers });
    const formCookie = form.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    return fetch(`${root}/dashboard/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...headers, cookie: formCookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: token, email: 'C@Example.test', password }),
    });
  }

  it('marks the session cookie Secure when the request came over HTTPS through a trusted proxy', async () => {
    const plain = await signIn(base, PASSWORD);
    expect(plain.status).toBe(303);
    const plainCookie = plain.headers.getSetCookie().find((c) => c.startsWith('daguerre_session='))!;
    expect(plainCookie).toMatch(/; Path=\/dashboard; .*HttpOnly; SameSite=Lax$/);
    expect(plainCookie).not.toContain('Secure');

    const viaProxy = await signIn(base, PASSWORD, { 'x-forwarded-proto': 'https' });
    const secureCookie = viaProxy.headers.getSetCookie().find((c) => c.startsWith('daguerre_session='))!;
    expect(secureCookie).toMatch(/HttpOnly; Secure; SameSite=Lax$/);
  });

  it('sends strict security headers and never caches pages', async () => {
    const response = await fetch(`${base}/dashboard/sign-in`);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const css = await fetch(`${base}/dashboard/assets/dashboard.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toContain('text/css');
  });

  it('refuses plain HTTP when REQUIRE_HTTPS is set', async () => {
    const response = await fetch(`${httpsOnlyBase}/dashboard/sign-in`);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('HTTPS required');
    expect((await signIn(httpsOnlyBase, PASSWORD, { 'x-forwarded-proto': 'https' })).status).toBe(303);
  });

  it('slows down password guessing: the 11th failure in a row is refused with Retry-After', async () => {
    for (let i = 0; i < 10; i++) expect((await signIn(base, 'wrong')).status).toBe(401);
    const refused = await signIn(base, PASSWORD);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.getSetCookie().some((c) => c.startsWith('daguerre_session='))).toBe(false);
  });
});

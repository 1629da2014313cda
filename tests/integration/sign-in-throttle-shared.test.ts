import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { mountDashboard } from '../../server/src/dashboard/index.js';
import { openDataLayer, type DataLayer } from '../../server/src/runtime.js';
import { hashPassword } from '../../server/src/services/passwords.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

const PASSWORD = 'correct horse battery staple';
const TARGET = 'target@example.test';

/** docs/containment.md: two instances on one MariaDB, each with its own process state, share the sign-in lock. */
describe('dashboard sign-in throttle across instances (MariaDB)', () => {
  let database: TestDatabase;
  const instances: Array<{ data: DataLayer; server: Server; base: string }> = [];

  async function startInstance() {
    // A data layer of its own (its own connection pool), as a second process would have.
    const data = await openDataLayer(loadConfig({}, { DATABASE_URL: database.url }));
    const app = express();
    // The client address comes from X-Forwarded-For, so that a test can be several addresses.
    app.set('trust proxy', true);
    mountDashboard(app, { data, logger: pino({ level: 'silent' }), config: { REQUIRE_HTTPS: false, STORAGE_ENCRYPTION_KEY: undefined } });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const instance = { data, server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    instances.push(instance);
    return instance;
  }

  /** The sign-in form's cookie and token, fetched once and sent with any number of attempts. */
  async function signInForm(base: string) {
    const form = await fetch(`${base}/dashboard/sign-in`);
    const cookie = form.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    return { cookie, token: /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]! };
  }

  async function signIn(
    base: string,
    password: string,
    options: { email?: string; address?: string; form?: { cookie: string; token: string } } = {},
  ) {
    const { cookie, token } = options.form ?? (await signInForm(base));
    return fetch(`${base}/dashboard/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie,
        'content-type': 'application/x-www-form-urlencoded',
        ...(options.address ? { 'x-forwarded-for': options.address } : {}),
      },
      body: new URLSearchParams({ _csrf: token, email: options.email ?? 'shared@example.test', password }),
    });
  }

  beforeAll(async () => {
    database = await createTestDatabase('mysql');
    const first = await startInstance();
    await startInstance();
    const plan = await first.data.accounts.createPlan({ name: 'p', tier: 't', creditsPerMonth: 5 });
    const org = await first.data.accounts.createOrganization('Org', plan);
    const user = await first.data.accounts.createUser('shared@example.test', 'S', await hashPassword(PASSWORD));
    await first.data.accounts.addMember(org.id, user.id);
    const target = await first.data.accounts.createUser(TARGET, 'T', await hashPassword(PASSWORD));
    await first.data.accounts.addMember(org.id, target.id);
  }, 60_000);
  afterAll(async () => {
    for (const { server, data } of instances) {
      await new Promise((resolve) => server.close(resolve));
      await data.db.close();
    }
    await database?.drop();
  });

  it('locks the account on the second instance after failures spread over both, with the right password too', async () => {
    const [a, b] = instances;
    // Five failures on each instance: neither alone reached the limit of ten.
    for (let i = 0; i < 10; i += 1) expect((await signIn(i % 2 === 0 ? a!.base : b!.base, 'wrong')).status).toBe(401);
    for (const instance of [a!, b!]) {
      const refused = await signIn(instance.base, PASSWORD);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.getSetCookie().some((c) => c.startsWith('daguerre_session='))).toBe(false);
    }
  }, 60_000);

  it('200 parallel guesses over both instances have at most 10 passwords checked, and the owner still signs in from another address', async () => {
    const [a, b] = instances;
    const forms = [await signInForm(a!.base), await signInForm(b!.base)];
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        signIn(i % 2 === 0 ? a!.base : b!.base, `guess-${i}`, { email: TARGET, address: '198.51.100.23', form: forms[i % 2]! }).then(
          (r) => r.status,
        ),
      ),
    );
    // 401: the password was checked (and wrong); 429: refused before any check.
    expect(statuses.filter((status) => status === 401)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(190);
    // The attacker's address stays locked for this email, even with the right password...
    expect((await signIn(a!.base, PASSWORD, { email: TARGET, address: '198.51.100.23' })).status).toBe(429);
    // ...and the owner, from elsewhere, signs in on either instance.
    expect((await signIn(b!.base, PASSWORD, { email: TARGET, address: '203.0.113.50' })).status).toBe(303);
    expect((await signIn(a!.base, PASSWORD, { email: TARGET, address: '203.0.113.51' })).status).toBe(303);
  }, 120_000);
});

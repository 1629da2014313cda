/**
 * Produces docs/dashboard.png, the README's picture of the dashboard, with Daguerre itself:
 * starts a service on a throw-away SQLite database, fills it with demo data (an organization
 * whose billing period began 17 days ago, keys, 17 days of capture history and a few real
 * captures), signs in over HTTP, then asks its own /capture for the usage
 * page, passing the session cookie through the `headers` parameter.
 *
 *   npx tsx scripts/dashboard-screenshot.ts            writes docs/dashboard.png
 *   npx tsx scripts/dashboard-screenshot.ts --keep     also keeps the service running (prints URL and sign-in)
 *   DASHBOARD_SCREENSHOT_OUT=path  writes elsewhere;  DASHBOARD_SCREENSHOT_PAGE=keys  another page
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../server/src/config.js';
import { createLogger } from '../server/src/logger.js';
import { startRuntime, type Runtime } from '../server/src/runtime.js';
import { hashPassword } from '../server/src/services/passwords.js';

const DAY_MS = 86_400_000;
const EMAIL = 'ada@acme.example';
const PASSWORD = 'daguerre-demo';
const OUT = process.env.DASHBOARD_SCREENSHOT_OUT ?? new URL('../docs/dashboard.png', import.meta.url).pathname;
const PAGE = process.env.DASHBOARD_SCREENSHOT_PAGE ?? 'usage';

/** A small deterministic generator, so every run draws the same demo history. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) % 2 ** 32;
    return state / 2 ** 32;
  };
}

async function seed(runtime: Runtime) {
  const now = Date.now();
  const plan = await runtime.accounts.createPlan({ name: 'Pro', tier: 'pro', creditsPerMonth: 5_000 });
  const org = await runtime.accounts.createOrganization('Acme Inc.', plan, now - 17 * DAY_MS - 3 * 3_600_000);
  const user = await runtime.accounts.createUser(EMAIL, 'Ada Lovelace', await hashPassword(PASSWORD));
  await runtime.accounts.addMember(org.id, user.id, 'owner');

  const keys = {
    production: await runtime.apiKeys.create({ organizationId: org.id, userId: user.id, name: 'Production server' }),
    staging: await runtime.apiKeys.create({
      organizationId: org.id,
      userId: user.id,
      name: 'Staging',
      expiresAt: new Date(now + 45 * DAY_MS),
    }),
    ci: await runtime.apiKeys.create({ organizationId: org.id, userId: user.id, name: 'CI visual tests' }),
    old: await runtime.apiKeys.create({ organizationId: org.id, userId: user.id, name: 'Old laptop' }),
  };
  await runtime.apiKeys.revoke(keys.old.id);
  const touch = (id: string, at: number) => runtime.db.knex('api_keys').where('id', id).update({ last_used_at: at });
  await touch(keys.staging.id, now - 2 * 3_600_000);
  await touch(keys.ci.id, now - 26 * 3_600_000);
  await touch(keys.old.id, now - 40 * DAY_MS);

  // History of the period so far, written straight into the ledger (demo data only).
  const next = random(42);
  const balance = await runtime.credits.balance(org.id);
  const rows: Record<string, unknown>[] = [];
  const hosts = ['www.acme.example', 'shop.acme.example', 'blog.acme.example', 'status.acme.example', null];
  const formats = ['png', 'png', 'png', 'jpeg', 'webp', 'pdf'];
  const keyIds = [keys.production.id, keys.production.id, keys.staging.id, keys.ci.id];
  for (let at = balance!.period_start + 3_600_000; at < now - 3_600_000; at += 30 * 60_000) {
    const day = new Date(at).getUTCDay();
    const weekday = day !== 0 && day !== 6;
    const progress = (at - balance!.period_start) / (now - balance!.period_start);
    const expected = (weekday ? 2.4 : 0.7) * (0.7 + progress * 0.8);
    const count = Math.floor(expected + next());
    for (let i = 0; i < count; i++) {
      const roll = next();
      const status = roll < 0.04 ? 'released' : roll < 0.16 ? 'cache_hit' : 'charged';
      const format = formats[Math.floor(next() * formats.length)]!;
      const host = hosts[Math.floor(next() * hosts.length)] ?? null;
      const created = at + Math.floor(next() * 30 * 60_000);
      const processing = status === 'cache_hit' ? 3 + Math.floor(next() * 8) : 600 + Math.floor(next() * 2_400);
      rows.push({
        request_id: randomUUID(),
        organization_id: org.id,
        api_key_id: keyIds[Math.floor(next() * keyIds.length)],
        status,
        format,
        source: host ? 'url' : 'html',
        target_host: host,
        credits: status === 'charged' ? 1 : 0,
        processing_ms: status === 'released' ? null : processing,
        file_size: status === 'released' ? null : Math.floor((format === 'pdf' ? 180_000 : 90_000) + next() * 400_000),
        user_agent: 'daguerre-client/0.1',
        error_code: status === 'released' ? (next() < 0.5 ? 'CAPTURE_TIMEOUT' : 'TARGET_PROTECTED') : null,
        created_at: created,
        finished_at: created + processing,
      });
    }
  }
  for (let i = 0; i < rows.length; i += 200) await runtime.db.knex('capture_ledger').insert(rows.slice(i, i + 200));
  const used = rows.filter((row) => row.status === 'charged').length;
  await runtime.db
    .knex('credit_balances')
    .where('organization_id', org.id)
    .update({ used, remaining: runtime.db.knex.raw('remaining - ?', [used]) });

  // And a few real captures, the newest rows of the table.
  const page = (title: string, colour: string) =>
    `<html><body style="margin:0;font-family:sans-serif;background:${colour};color:#fff"><h1 style="padding:40px">${title}</h1></body></html>`;
  for (const [format, title, colour] of [
    ['png', 'Landing page', '#4f46e5'],
    ['webp', 'Pricing', '#0e9384'],
    ['pdf', 'Invoice #1042', '#344054'],
  ] as const) {
    const response = await fetch(
      `${runtime.url}/capture?${new URLSearchParams({ html: page(title, colour), format, viewportWidth: '1280', viewportHeight: '800' })}`,
      {
        headers: { 'x-api-key': keys.production.key, 'user-agent': 'daguerre-client/0.1' },
      },
    );
    if (!response.ok) throw new Error(`demo capture failed: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  }
  return { org, user, key: keys.production.key };
}

/** Added after the captures: the demo has no real bucket, and a default configuration makes every capture upload. */
async function addStorageConfig(runtime: Runtime, organizationId: string) {
  await runtime.storageConfigs.create(organizationId, {
    name: 'Production bucket',
    endpoint: 'https://s3.eu-central-1.amazonaws.com',
    bucket: 'acme-captures',
    region: 'eu-central-1',
    accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    isDefault: false,
  });
}

/** Signs in like a browser: the form's token from its cookie, then the session cookie. */
async function signIn(baseUrl: string): Promise<string> {
  const form = await fetch(`${baseUrl}/dashboard/sign-in`);
  const formCookie = form.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .join('; ');
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  if (!token) throw new Error('no sign-in token on the sign-in page');
  const response = await fetch(`${baseUrl}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie },
    body: new URLSearchParams({ _csrf: token, email: EMAIL, password: PASSWORD }),
  });
  const session = response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('daguerre_session='));
  if (response.status !== 303 || !session) throw new Error(`sign-in failed: HTTP ${response.status}`);
  return session;
}

async function main() {
  const keep = process.argv.includes('--keep');
  const dir = mkdtempSync(join(tmpdir(), 'daguerre-dashboard-demo-'));
  const config = loadConfig(
    {},
    {
      PORT: process.env.PORT ?? '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'demo.db')}`,
      // The dashboard is on loopback: the capture must be allowed to reach it.
      ALLOW_PRIVATE_NETWORK: 'true',
      STORAGE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      MAX_CONCURRENCY: '2',
      LOG_LEVEL: 'warn',
    },
  );
  const runtime = await startRuntime(config, { logger: createLogger(config.LOG_LEVEL) });
  try {
    const { key, org } = await seed(runtime);
    const cookie = await signIn(runtime.url);
    const query = new URLSearchParams({
      url: `${runtime.url}/dashboard/${PAGE}`,
      headers: JSON.stringify({ Cookie: cookie }),
      viewportWidth: '1440',
      // The top of the page: figures, chart and the newest captures.
      viewportHeight: '1180',
      theme: 'light',
      waitUntil: 'networkidle0',
    });
    const response = await fetch(`${runtime.url}/capture?${query}`, { headers: { 'x-api-key': key } });
    if (!response.ok) throw new Error(`capture of the dashboard failed: ${response.status} ${await response.text()}`);
    writeFileSync(OUT, Buffer.from(await response.arrayBuffer()));
    console.log(`wrote ${OUT}`);
    if (keep) {
      await addStorageConfig(runtime, org.id);
      console.log(`dashboard: ${runtime.url}/dashboard  (sign in as ${EMAIL} / ${PASSWORD}; API key ${key})`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    }
  } finally {
    await runtime.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

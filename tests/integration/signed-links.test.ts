import { createHmac } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../client/src/index.js';
import { SERVER_KEY_FILE_NAME } from '../../server/src/security/server-key.js';
import { decodePng } from '../helpers/images.js';
import { capturedLogLines, startTestService, type TestService } from '../helpers/test-service.js';
import { withPackLock } from '../helpers/temp-project.js';

const run = promisify(execFile);
const REPO = new URL('../../', import.meta.url).pathname;
const CLI = join(REPO, 'server/bin/daguerre.js');
const PAGE = '<html><body style="margin:0;background:rgb(20,120,220)"><h1>signed</h1></body></html>';

const sign = (secret: string, query: string) => createHmac('sha256', secret).update(query, 'utf8').digest('hex');
const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('signed capture links (sqlite)', () => {
  let service: TestService;
  let keyId: string;
  let secret: string;
  const signedPath = (query: string, signingSecret = secret) => `/capture?${query}&signature=${sign(signingSecret, query)}`;
  const remaining = async () => (await service.client.usage()).credits.remaining;
  const ledgerSize = async () => (await service.runtime.credits.ledger(service.organizationId, 1000)).length;

  async function expectRefused(path: string, status: number, code: string) {
    const before = await remaining();
    const rows = await ledgerSize();
    const response = await service.get(path);
    const body = (await response.json()) as { success: boolean; error: { code: string; message: string } };
    expect({ status: response.status, code: body.error.code, success: body.success }).toEqual({ status, code, success: false });
    expect(await remaining()).toBe(before);
    expect(await ledgerSize()).toBe(rows);
    return body;
  }

  beforeAll(async () => {
    service = await startTestService({ credits: 100 });
    const created = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'links' });
    keyId = created.id;
    secret = created.signingSecret;
  });
  afterAll(async () => service?.stop());

  it('answers the image to a bare GET carrying no key, and charges one credit', async () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const before = await remaining();
    const query = q({ html: PAGE, viewportWidth: '320', viewportHeight: '200', keyId, expires: String(nowSeconds() + 600) });
    const response = await service.get(signedPath(query));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    const image = decodePng(new Uint8Array(await response.arrayBuffer()));
    expect([image.width, image.height]).toEqual([320, 200]);
    expect(await remaining()).toBe(before - 1);
    // Without expires the link does not expire.
    const open = await service.get(signedPath(q({ html: PAGE, viewportWidth: '300', viewportHeight: '100', keyId })));
    expect(open.status).toBe(200);
  });

  it('refuses tampered, reordered, unsigned or truncated links with INVALID_SIGNATURE and charges nothing', async () => {
    const expires = String(nowSeconds() + 600);
    const query = q({ html: PAGE, viewportWidth: '320', keyId, expires });
    const signature = sign(secret, query);
    // A parameter's value changed.
    await expectRefused(
      `/capture?${query.replace('viewportWidth=320', 'viewportWidth=321')}&signature=${signature}`,
      401,
      'INVALID_SIGNATURE',
    );
    // A parameter added.
    await expectRefused(`/capture?${query}&fullPage=true&signature=${signature}`, 401, 'INVALID_SIGNATURE');
    // The same parameters in another order.
    const reordered = q({ viewportWidth: '320', html: PAGE, keyId, expires });
    await expectRefused(`/capture?${reordered}&signature=${signature}`, 401, 'INVALID_SIGNATURE');
    // expires dropped (or moved to a later time).
    await expectRefused(`/capture?${q({ html: PAGE, viewportWidth: '320', keyId })}&signature=${signature}`, 401, 'INVALID_SIGNATURE');
    await expectRefused(
      `/capture?${query.replace(`expires=${expires}`, `expires=${Number(expires) + 1000}`)}&signature=${signature}`,
      401,
      'INVALID_SIGNATURE',
    );
    // Another secret, a missing or malformed signature, signature not last, no keyId, an unknown keyId.
    await expectRefused(signedPath(query, 'rss_not-the-secret'), 401, 'INVALID_SIGNATURE');
    await expectRefused(`/capture?${query}`, 401, 'INVALID_SIGNATURE');
    await expectRefused(`/capture?${query}&signature=${signature.toUpperCase()}`, 401, 'INVALID_SIGNATURE');
    await expectRefused(`/capture?${query}&signature=${signature}&format=png`, 401, 'INVALID_SIGNATURE');
    const noKeyId = q({ html: PAGE, expires });
    await expectRefused(signedPath(noKeyId), 401, 'INVALID_SIGNATURE');
    await expectRefused(signedPath(q({ html: PAGE, keyId: '00000000-0000-4000-8000-000000000000' })), 401, 'INVALID_SIGNATURE');
  });

  it('refuses a correctly signed link whose expires is past with SIGNED_LINK_EXPIRED', async () => {
    const body = await expectRefused(signedPath(q({ html: PAGE, keyId, expires: String(nowSeconds() - 5) })), 401, 'SIGNED_LINK_EXPIRED');
    expect(body.error.message).not.toContain(secret);
  });

  it("applies the key's own states: revoked → INVALID_API_KEY, expired → API_KEY_EXPIRED", async () => {
    const revoked = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'to-revoke' });
    const link = signedPath(q({ html: PAGE, keyId: revoked.id }), revoked.signingSecret);
    await service.runtime.apiKeys.revoke(revoked.id);
    await expectRefused(link, 401, 'INVALID_API_KEY');

    const expired = await service.runtime.apiKeys.create({
      organizationId: service.organizationId,
      name: 'old',
      expiresAt: new Date(Date.now() - 1000),
    });
    await expectRefused(signedPath(q({ html: PAGE, keyId: expired.id }), expired.signingSecret), 401, 'API_KEY_EXPIRED');
  });

  it('refuses apiKey together with signature with a 400', async () => {
    const query = q({ html: PAGE, apiKey: service.apiKey, keyId });
    await expectRefused(signedPath(query), 400, 'INVALID_INPUT');
  });

  it('serves repeated views of a cacheEnabled link from the cache, free', async () => {
    const link = signedPath(
      q({ html: PAGE, viewportWidth: '333', viewportHeight: '111', cacheEnabled: 'true', keyId, expires: String(nowSeconds() + 600) }),
    );
    const before = await remaining();
    const first = await service.get(link);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-cache')).toBe('MISS');
    const second = await service.get(link);
    expect(second.status).toBe(200);
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(Buffer.from(await second.arrayBuffer()).equals(Buffer.from(await first.arrayBuffer()))).toBe(true);
    expect(await remaining()).toBe(before - 1);
    // The same options sent with the key share the cache entry: keyId/expires/signature are not in the cache key.
    const withKey = await service.get(
      `/capture?${q({ html: PAGE, viewportWidth: '333', viewportHeight: '111', cacheEnabled: 'true', apiKey: service.apiKey })}`,
    );
    expect(withKey.headers.get('x-cache')).toBe('HIT');
  });

  it('with requireSignedLinks refuses apiKey in the query (SIGNATURE_REQUIRED) but takes X-API-Key and signed links', async () => {
    await service.runtime.accounts.setRequireSignedLinks(service.organizationId, true);
    try {
      await expectRefused(`/capture?${q({ html: PAGE, apiKey: service.apiKey })}`, 401, 'SIGNATURE_REQUIRED');
      const header = await service.get(`/capture?${q({ html: PAGE, viewportWidth: '200', viewportHeight: '100' })}`, {
        headers: { 'x-api-key': service.apiKey },
      });
      expect(header.status).toBe(200);
      const signed = await service.get(signedPath(q({ html: PAGE, viewportWidth: '200', viewportHeight: '100', keyId })));
      expect(signed.status).toBe(200);
    } finally {
      await service.runtime.accounts.setRequireSignedLinks(service.organizationId, false);
    }
    expect((await service.get(`/usage?apiKey=${service.apiKey}`)).status).toBe(200);
  });

  it('rotating the secret invalidates links signed with the old one', async () => {
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'rotating' });
    const query = q({ html: PAGE, viewportWidth: '200', viewportHeight: '100', keyId: key.id });
    expect((await service.get(signedPath(query, key.signingSecret))).status).toBe(200);
    const rotated = await service.runtime.apiKeys.rotateSigningSecret(key.id);
    expect(rotated.signingSecret).not.toBe(key.signingSecret);
    await expectRefused(signedPath(query, key.signingSecret), 401, 'INVALID_SIGNATURE');
    expect((await service.get(signedPath(query, rotated.signingSecret))).status).toBe(200);
    expect(await service.runtime.signingSecrets.signingSecretFor(key.id)).toBe(rotated.signingSecret);
  });

  it('keeps the secret out of the database file, its WAL, the logs and the ledger; the server key is owner-only', async () => {
    const dbFile = service.database.url.slice('sqlite:'.length);
    await service.runtime.db.knex.raw('select 1');
    const files = [dbFile, `${dbFile}-wal`].filter((file) => existsSync(file));
    expect(files.length).toBeGreaterThan(0);
    const stored = (await service.runtime.db.knex('api_keys').where('id', keyId).first('signing_secret_encrypted')) as {
      signing_secret_encrypted: string;
    };
    expect(stored.signing_secret_encrypted).toMatch(/^v1:/);
    for (const file of files) {
      const bytes = readFileSync(file);
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
      expect(bytes.includes(Buffer.from(secret.slice(4)))).toBe(false);
    }
    const signatureSeen = sign(secret, q({ html: PAGE, viewportWidth: '320', viewportHeight: '200', keyId }));
    await service.get(`/capture?${q({ html: PAGE, viewportWidth: '320', viewportHeight: '200', keyId })}&signature=${signatureSeen}`);
    const logs = capturedLogLines.join('');
    expect(logs).toContain('signature=[REDACTED]');
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(signatureSeen);
    const ledger = JSON.stringify(await service.runtime.credits.ledger(service.organizationId, 1000));
    expect(ledger).not.toContain(secret);
    expect(ledger).not.toContain(signatureSeen);
    const keyFile = join(dirname(dbFile), SERVER_KEY_FILE_NAME);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
  });

  it('CLI: key create --json prints signingSecret, rotate-secret and org require-signed-links work', async () => {
    const cli = async (...args: string[]) => {
      const { stdout } = await run('node', [CLI, ...args, '--json'], {
        env: { ...process.env, DATABASE_URL: service.database.url },
        timeout: 30_000,
      });
      return JSON.parse(stdout) as Record<string, string | boolean>;
    };
    const created = await cli('key', 'create', '--org', service.organizationId, '--name', 'from-cli');
    expect(created).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: expect.stringMatching(/^rs_/),
      signingSecret: expect.stringMatching(/^whsec_/),
    });
    // The service (same data folder, same server key) accepts a link signed with the CLI's secret.
    const query = q({ html: PAGE, viewportWidth: '200', viewportHeight: '100', keyId: String(created.id) });
    expect((await service.get(signedPath(query, String(created.signingSecret)))).status).toBe(200);
    const rotated = await cli('key', 'rotate-secret', '--id', String(created.id));
    expect(rotated).toMatchObject({ id: created.id, signingSecret: expect.stringMatching(/^whsec_/) });
    expect(rotated.signingSecret).not.toBe(created.signingSecret);
    expect((await service.get(signedPath(query, String(rotated.signingSecret)))).status).toBe(200);

    expect(await cli('org', 'require-signed-links', '--id', service.organizationId, '--on')).toEqual({
      id: service.organizationId,
      requireSignedLinks: true,
    });
    expect((await service.get(`/usage?apiKey=${service.apiKey}`)).status).toBe(401);
    expect(await cli('org', 'require-signed-links', '--id', service.organizationId, '--off')).toEqual({
      id: service.organizationId,
      requireSignedLinks: false,
    });
    expect((await service.get(`/usage?apiKey=${service.apiKey}`)).status).toBe(200);
  });

  it('signedUrl() of the typed client makes links the service accepts', async () => {
    const client = createClient({ baseUrl: service.url, apiKey: service.apiKey, keyId, signingSecret: secret });
    const link = await client.signedUrl(
      { html: PAGE, viewportWidth: 240, viewportHeight: 120, removeSelectors: ['.ad', '#x y'] },
      { expiresIn: 300 },
    );
    expect(link.startsWith(`${service.url}/capture?`)).toBe(true);
    expect(link).not.toContain(service.apiKey);
    expect(link).toMatch(/&expires=\d+&signature=[0-9a-f]{64}$/);
    const response = await fetch(link);
    expect(response.status).toBe(200);
    expect(decodePng(new Uint8Array(await response.arrayBuffer())).width).toBe(240);
    const expired = await client.signedUrl({ html: PAGE }, { expiresIn: 1, now: Date.now() - 10_000 });
    expect((await fetch(expired)).status).toBe(401);
    await expect(createClient({ baseUrl: service.url, apiKey: service.apiKey }).signedUrl({ html: PAGE })).rejects.toThrow(
      /keyId and signingSecret/,
    );
  });

  it('signedUrl() from the packed client tarball makes links the service accepts', async () => {
    const work = mkdtempSync(join(REPO, '.tmp-signed-links-'));
    try {
      // prepack builds dist/ with tsup, as for a publish.
      await withPackLock(() => run('npm', ['pack', '--pack-destination', work], { cwd: join(REPO, 'client'), timeout: 120_000 }));
      const tarball = join(
        work,
        readdirSync(work).find((name) => name.endsWith('.tgz'))!,
      );
      // Unpacked under the repository so its dependencies (@ts-rest/core, zod) resolve from the root node_modules.
      const target = join(work, 'node_modules/@daguerre/client');
      await run('mkdir', ['-p', target]);
      await run('tar', ['xzf', tarball, '-C', target, '--strip-components=1']);
      const packed = (await import(join(target, 'dist/index.js'))) as typeof import('../../client/src/index.js');
      const client = packed.createClient({ baseUrl: service.url, apiKey: service.apiKey, keyId, signingSecret: secret });
      const response = await fetch(
        await client.signedUrl({ html: PAGE, viewportWidth: 260, viewportHeight: 100, format: 'jpeg' }, { expiresIn: 120 }),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/jpeg');
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('signed capture links (mysql)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ database: 'mysql', credits: 10 });
  });
  afterAll(async () => service?.stop());

  it('accepts a signed link, refuses a tampered one and a revoked key, and charges only the capture', async () => {
    const key = await service.runtime.apiKeys.create({ organizationId: service.organizationId, name: 'mysql-links' });
    const query = q({ html: PAGE, viewportWidth: '200', viewportHeight: '100', keyId: key.id, expires: String(nowSeconds() + 60) });
    const link = `/capture?${query}&signature=${sign(key.signingSecret, query)}`;
    const before = (await service.client.usage()).credits.remaining;
    expect((await service.get(link)).status).toBe(200);
    const tampered = await service.get(link.replace('viewportWidth=200', 'viewportWidth=201'));
    expect(((await tampered.json()) as { error: { code: string } }).error.code).toBe('INVALID_SIGNATURE');
    await service.runtime.accounts.setRequireSignedLinks(service.organizationId, true);
    expect((await service.get(`/usage?apiKey=${service.apiKey}`)).status).toBe(401);
    expect((await service.get('/usage', { headers: { 'x-api-key': service.apiKey } })).status).toBe(200);
    await service.runtime.apiKeys.revoke(key.id);
    const revoked = await service.get(link);
    expect(((await revoked.json()) as { error: { code: string } }).error.code).toBe('INVALID_API_KEY');
    expect((await service.client.usage()).credits.remaining).toBe(before - 1);
  });
});

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { startS3 } from '../helpers/s3.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

const run = promisify(execFile);
const CLI = new URL('../../server/bin/daguerre.js', import.meta.url).pathname;

describe('daguerre CLI', () => {
  let database: TestDatabase;
  let service: TestService | undefined;
  const cli = async (...args: string[]) => {
    const { stdout } = await run('node', [CLI, ...args, '--json'], {
      env: { ...process.env, DATABASE_URL: database.url },
      timeout: 30_000,
    });
    return JSON.parse(stdout) as Record<string, unknown> & Array<Record<string, unknown>>;
  };

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
  });
  afterAll(async () => {
    await service?.stop();
    await database.drop();
  });

  it('migrates, creates a plan, an organization, a user, a membership and a key', async () => {
    expect(await cli('migrate')).toEqual({ migrated: true });
    const plan = await cli('plan', 'create', '--name', 'Pro', '--credits', '5', '--tier', 'pro', '--rollover');
    expect(plan).toMatchObject({ name: 'Pro', tier: 'pro', creditsPerMonth: 5, rollover: true });
    const org = await cli('org', 'create', '--name', 'Acme', '--plan', 'Pro');
    expect(org).toMatchObject({ name: 'Acme', planName: 'Pro' });
    expect(org.id).toMatch(/^[0-9a-f-]{36}$/);
    const user = await cli('user', 'create', '--email', 'ada@example.com', '--name', 'Ada');
    expect(await cli('member', 'add', '--org', 'Acme', '--user', 'ada@example.com')).toMatchObject({ userId: user.id, active: true });
    const key = await cli(
      'key',
      'create',
      '--org',
      String(org.id),
      '--name',
      'ci',
      '--user',
      'ada@example.com',
      '--expires',
      '2099-01-01T00:00:00Z',
    );
    expect(key.key).toMatch(/^rs_[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({ name: 'ci', expiresAt: '2099-01-01T00:00:00.000Z' });
    expect(String(key.key).startsWith(String(key.prefix))).toBe(true);

    const keys = await cli('key', 'list', '--org', 'Acme');
    expect(keys).toHaveLength(1);
    expect(JSON.stringify(keys)).not.toContain(String(key.key));

    // The key works against the service on the same database; then the CLI revokes it.
    service = await startTestService({ databaseUrl: database.url });
    const client = service.clientFor(String(key.key));
    expect((await client.usage()).credits.totalMonthlyAllocation).toBe(5);
    expect(await cli('credits', 'grant', '--org', 'Acme', '--amount', '10')).toMatchObject({ remaining: 15 });
    expect((await client.usage()).credits.remaining).toBe(15);

    await cli('member', 'deactivate', '--org', 'Acme', '--user', 'ada@example.com');
    expect((await service.get(`/usage?apiKey=${key.key}`)).status).toBe(403);

    await cli('key', 'revoke', String(key.id));
    const revoked = await service.get(`/usage?apiKey=${key.key}`);
    expect(revoked.status).toBe(401);
    expect(((await revoked.json()) as { error: { code: string } }).error.code).toBe('INVALID_API_KEY');
  });

  it('manages storage configurations and tests their connection against s3rver', async () => {
    const s3 = await startS3();
    const env = { ...process.env, DATABASE_URL: database.url, STORAGE_ENCRYPTION_KEY: '11'.repeat(32), ALLOW_PRIVATE_NETWORK: 'true' };
    const cliWithKey = async (...args: string[]) =>
      JSON.parse((await run('node', [CLI, ...args, '--json'], { env, timeout: 30_000 })).stdout) as Record<string, unknown> &
        Array<Record<string, unknown>>;
    try {
      await cliWithKey('org', 'create', '--name', 'Storage org');
      const added = await cliWithKey(
        'storage',
        'add',
        '--org',
        'Storage org',
        '--name',
        'main',
        '--endpoint',
        s3.endpoint,
        '--bucket',
        s3.bucket,
        '--access-key-id',
        s3.accessKeyId,
        '--secret-access-key',
        s3.secretAccessKey,
      );
      expect(added).toMatchObject({ name: 'main', isDefault: true, bucket: s3.bucket });
      expect(JSON.stringify(added)).not.toContain(s3.secretAccessKey);
      expect(await cliWithKey('storage', 'test', '--org', 'Storage org', 'main')).toEqual({ name: 'main', ok: true });
      await cliWithKey(
        'storage',
        'add',
        '--org',
        'Storage org',
        '--name',
        'wrong',
        '--endpoint',
        s3.endpoint,
        '--bucket',
        'missing-bucket',
        '--access-key-id',
        s3.accessKeyId,
        '--secret-access-key',
        s3.secretAccessKey,
      );
      const failed = await run('node', [CLI, 'storage', 'test', '--org', 'Storage org', 'wrong', '--json'], { env }).catch(
        (e: { stderr: string }) => e,
      );
      expect((failed as { stderr: string }).stderr).toMatch(/Connection test failed: NoSuchBucket/);
      expect(await cliWithKey('storage', 'default', '--org', 'Storage org', 'wrong')).toMatchObject({ default: 'wrong' });
      const list = await cliWithKey('storage', 'list', '--org', 'Storage org');
      expect(list.filter((c) => c.isDefault).map((c) => c.name)).toEqual(['wrong']);
      expect(await cliWithKey('storage', 'delete', '--org', 'Storage org', 'wrong')).toEqual({ name: 'wrong', deleted: true });
    } finally {
      await s3.stop();
    }
  });

  it('fails with a message naming the problem', async () => {
    const failure = await run('node', [CLI, 'org', 'create', '--name', 'X', '--plan', 'nope', '--json'], {
      env: { ...process.env, DATABASE_URL: database.url },
    }).catch((e: { stderr: string; code: number }) => e);
    expect((failure as { code: number }).code).toBe(1);
    expect((failure as { stderr: string }).stderr).toContain('No plan with id or name "nope"');
    // Numbers are decimal digits: Number() would have granted sixteen credits for "0x10".
    const hex = await run('node', [CLI, 'credits', 'grant', '--org', 'Acme', '--amount', '0x10'], {
      env: { ...process.env, DATABASE_URL: database.url },
    }).catch((e: { stderr: string; code: number }) => e);
    expect((hex as { code: number }).code).toBe(1);
    expect((hex as { stderr: string }).stderr).toContain('--amount must be a whole number of at least 1; got "0x10"');
  });

  it('stops start-up with a message naming a bad variable', async () => {
    const failure = await run('node', [CLI, 'migrate'], {
      env: { ...process.env, DATABASE_URL: database.url, MAX_CONCURRENCY: 'lots' },
    }).catch((e: { stderr: string; code: number }) => e);
    expect((failure as { stderr: string }).stderr).toContain('MAX_CONCURRENCY');
  });
});

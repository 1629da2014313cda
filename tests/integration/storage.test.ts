import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../server/src/errors.js';
import { StorageEncryptionError } from '../../server/src/security/secret-box.js';
import { StorageUploader, type StorageTarget } from '../../server/src/services/storage.js';
import { migrate, openDatabase, type Database } from '../../server/src/store/database.js';
import { AccountsRepository } from '../../server/src/store/accounts-repository.js';
import { StorageConfigRepository } from '../../server/src/store/storage-config-repository.js';
import { SecretBox } from '../../server/src/security/secret-box.js';
import { EgressAllowList } from '../../server/src/security/address-policy.js';
import { systemResolver } from '../../server/src/security/resolver.js';
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from '../helpers/databases.js';
import { decodePng, pdfPages } from '../helpers/images.js';
import { closedPort, startS3, startSilentServer, type TestS3 } from '../helpers/s3.js';
import { capturedLogLines, captureQuery, startTestService, type TestService } from '../helpers/test-service.js';

const PAGE = '<html><body style="margin:0;background:rgb(120,40,160)"><h1 style="color:white">Stored</h1></body></html>';
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

interface ErrorBody {
  success: false;
  error: { code: string; message: string };
}

const KEY_PATTERN = /^captures\/\d{4}\/\d{2}\/\d{2}\/[0-9a-f-]{36}\.(png|pdf|jpg|webp)$/;

describe('S3-compatible storage of captures', () => {
  let s3: TestS3;
  let service: TestService;

  beforeAll(async () => {
    s3 = await startS3({ extraBuckets: ['org-default'] });
    service = await startTestService({ credits: 100, env: { STORAGE_ENCRYPTION_KEY: ENCRYPTION_KEY, STORAGE_REQUEST_TIMEOUT_MS: '1500' } });
  });
  afterAll(async () => {
    await service?.stop();
    await s3?.stop();
  });

  const requestStorage = (overrides: Record<string, string> = {}) => ({
    requestStorageEnabled: true,
    requestStorageEndpoint: s3.endpoint,
    requestStorageAccessKeyId: s3.accessKeyId,
    requestStorageSecretAccessKey: s3.secretAccessKey,
    requestStorageBucket: s3.bucket,
    ...overrides,
  });

  const capture = (params: Record<string, string | number | boolean>) =>
    service.get(`/capture?${captureQuery(params)}`, { headers: { 'x-api-key': service.apiKey } });

  const keyOf = (url: string, bucket = s3.bucket) => {
    const prefix = `${s3.endpoint}/${bucket}/`;
    expect(url.startsWith(prefix)).toBe(true);
    return url.slice(prefix.length);
  };

  it('uploads to per-request storage and returns data.url in JSON mode', async () => {
    const result = await service.client.captureJson({ html: PAGE, viewportWidth: 400, viewportHeight: 300, ...requestStorage() });
    const key = keyOf(result.data.url!);
    expect(key).toMatch(KEY_PATTERN);
    const now = new Date();
    expect(key).toBe(
      `captures/${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, '0')}/${String(now.getUTCDate()).padStart(2, '0')}/${result.data.requestId}.png`,
    );
    const stored = await s3.getObject(key);
    expect(stored.contentType).toBe('image/png');
    expect(stored.bytes.equals(Buffer.from(result.data.imageData!.split(',')[1]!, 'base64'))).toBe(true);
    expect(decodePng(stored.bytes).width).toBe(400);
  });

  it('adds X-Storage-Url in binary mode (pdf stored as application/pdf)', async () => {
    const response = await capture({ html: PAGE, format: 'pdf', ...requestStorage() });
    expect(response.status).toBe(200);
    const body = Buffer.from(await response.arrayBuffer());
    const url = response.headers.get('x-storage-url')!;
    const key = keyOf(url);
    expect(key).toBe(`${key.slice(0, 20)}${response.headers.get('x-request-id')}.pdf`);
    const stored = await s3.getObject(key);
    expect(stored.contentType).toBe('application/pdf');
    expect(stored.bytes.equals(body)).toBe(true);
    expect((await pdfPages(stored.bytes)).count).toBeGreaterThan(0);
  });

  describe('upload failures name the storage stage, charge nothing and never echo the secret', () => {
    const cases: Array<{ name: string; overrides: () => Promise<Record<string, string>> | Record<string, string>; message: RegExp }> = [
      {
        name: 'wrong secret access key',
        overrides: () => ({ requestStorageSecretAccessKey: 'wrong-secret-that-must-not-leak-123' }),
        message:
          /^Upload to storage failed: SignatureDoesNotMatch, the secret access key does not match the access key id \(per-request storage\); nothing was charged$/,
      },
      {
        name: 'unknown access key id',
        overrides: () => ({ requestStorageAccessKeyId: 'no-such-key-id' }),
        message: /^Upload to storage failed: InvalidAccessKeyId, the access key id is not known to the storage service/,
      },
      {
        name: 'bucket that does not exist',
        overrides: () => ({ requestStorageBucket: 'no-such-bucket' }),
        message: /^Upload to storage failed: NoSuchBucket, the bucket "no-such-bucket" does not exist/,
      },
      {
        name: 'endpoint where nothing listens',
        overrides: async () => ({ requestStorageEndpoint: `http://127.0.0.1:${await closedPort()}` }),
        message: /^Upload to storage failed: endpoint unreachable, 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
      },
    ];

    for (const testCase of cases) {
      it(testCase.name, async () => {
        const overrides = await testCase.overrides();
        const before = await service.client.usage();
        const logLinesBefore = capturedLogLines.length;
        const response = await capture({ html: PAGE, viewportWidth: 300, viewportHeight: 200, ...requestStorage(overrides) });
        expect(response.status).toBe(500);
        const text = await response.text();
        const body = JSON.parse(text) as ErrorBody;
        expect(body.error.code).toBe('OPERATION_FAILED');
        expect(body.error.message).toMatch(testCase.message);
        const secret = overrides.requestStorageSecretAccessKey ?? s3.secretAccessKey;
        expect(text).not.toContain(secret);
        const logs = capturedLogLines.slice(logLinesBefore).join('\n');
        expect(logs).toContain('Upload to storage failed');
        expect(logs).not.toContain(secret);
        expect((await service.client.usage()).credits).toEqual(before.credits);
        const [last] = await service.runtime.credits.ledger(service.organizationId, 1);
        expect(last).toMatchObject({
          request_id: response.headers.get('x-request-id'),
          status: 'released',
          error_code: 'OPERATION_FAILED',
        });
      });
    }

    it('an endpoint that accepts the connection but never answers (timeout)', async () => {
      const silent = await startSilentServer();
      try {
        const before = await service.client.usage();
        const started = Date.now();
        const response = await capture({
          html: PAGE,
          viewportWidth: 300,
          viewportHeight: 200,
          ...requestStorage({ requestStorageEndpoint: silent.endpoint }),
        });
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(response.status).toBe(500);
        const body = (await response.json()) as ErrorBody;
        expect(body.error.message).toMatch(
          /^Upload to storage failed: timeout, the storage endpoint at 127\.0\.0\.1:\d+ did not answer in time/,
        );
        expect((await service.client.usage()).credits).toEqual(before.credits);
      } finally {
        await silent.stop();
      }
    });
  });

  it('does not cache a render whose request failed at the upload (no free render afterwards)', async () => {
    const html = `${PAGE}<!-- ${Date.now()} -->`;
    const failed = await capture({
      html,
      viewportWidth: 300,
      viewportHeight: 200,
      cacheEnabled: true,
      ...requestStorage({ requestStorageBucket: 'no-such-bucket' }),
    });
    expect(failed.status).toBe(500);
    const before = await service.client.usage();
    const next = await capture({ html, viewportWidth: 300, viewportHeight: 200, cacheEnabled: true });
    expect(next.headers.get('x-cache')).toBe('MISS');
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(before.credits.usedThisPeriod + 1);
  });

  it("uploads a cache hit under the hit's own request id", async () => {
    const html = `${PAGE}<!-- hit ${Date.now()} -->`;
    const first = await service.client.captureJson({
      html,
      viewportWidth: 300,
      viewportHeight: 200,
      cacheEnabled: true,
      ...requestStorage(),
    });
    const second = await capture({ html, viewportWidth: 300, viewportHeight: 200, cacheEnabled: true, ...requestStorage() });
    expect(second.headers.get('x-cache')).toBe('HIT');
    const secondKey = keyOf(second.headers.get('x-storage-url')!);
    expect(secondKey).toContain(second.headers.get('x-request-id')!);
    expect(secondKey).not.toBe(keyOf(first.data.url!));
    expect((await s3.getObject(secondKey)).bytes.equals(Buffer.from(await second.arrayBuffer()))).toBe(true);
  });

  describe("the organization's default storage configuration", () => {
    it('is used when the request gives no storage, and per-request storage wins over it', async () => {
      const config = await service.runtime.storageConfigs.create(service.organizationId, {
        name: 'default bucket',
        endpoint: s3.endpoint,
        bucket: 'org-default',
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
        isDefault: true,
      });
      try {
        const viaDefault = await service.client.captureJson({ html: PAGE, viewportWidth: 300, viewportHeight: 200 });
        const key = keyOf(viaDefault.data.url!, 'org-default');
        const stored = await s3.getObject(key, 'org-default');
        expect(stored.bytes.equals(Buffer.from(viaDefault.data.imageData!.split(',')[1]!, 'base64'))).toBe(true);

        const viaRequest = await service.client.captureJson({ html: PAGE, viewportWidth: 300, viewportHeight: 200, ...requestStorage() });
        expect(viaRequest.data.url!.startsWith(`${s3.endpoint}/${s3.bucket}/`)).toBe(true);
      } finally {
        await service.runtime.storageConfigs.delete(service.organizationId, config.id);
      }
      const without = await service.client.captureJson({ html: PAGE, viewportWidth: 300, viewportHeight: 200 });
      expect(without.data.url).toBeUndefined();
    });

    it('names the configuration when its upload fails', async () => {
      const config = await service.runtime.storageConfigs.create(service.organizationId, {
        name: 'broken',
        endpoint: s3.endpoint,
        bucket: 'gone-bucket',
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
        isDefault: true,
      });
      try {
        const response = await capture({ html: PAGE, viewportWidth: 300, viewportHeight: 200 });
        expect(response.status).toBe(500);
        expect(((await response.json()) as ErrorBody).error.message).toBe(
          'Upload to storage failed: NoSuchBucket, the bucket "gone-bucket" does not exist (storage configuration "broken"); nothing was charged',
        );
      } finally {
        await service.runtime.storageConfigs.delete(service.organizationId, config.id);
      }
    });

    it('passes the connection test with good settings and names the problem otherwise', async () => {
      const target: StorageTarget = {
        endpoint: s3.endpoint,
        bucket: s3.bucket,
        region: 'us-east-1',
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
        forcePathStyle: true,
        source: { kind: 'request' },
      };
      await expect(service.runtime.storage.checkConnection(target)).resolves.toBeUndefined();
      await expect(service.runtime.storage.checkConnection({ ...target, bucket: 'nope' })).rejects.toThrow(
        /^Upload to storage failed: NotFound/,
      );
    });
  });
});

describe.each(DATABASE_KINDS)('storage configurations in the database (%s)', (kind) => {
  let database: TestDatabase;
  let db: Database;
  let repository: StorageConfigRepository;
  let organizationId: string;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    db = openDatabase(database.url);
    await migrate(db);
    repository = new StorageConfigRepository(db, SecretBox.fromSetting(randomBytes(32).toString('hex')));
    const accounts = new AccountsRepository(db);
    const plan = await accounts.createPlan({ name: 'p', tier: 'test', creditsPerMonth: 1 });
    organizationId = (await accounts.createOrganization('Org', plan)).id;
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const base = {
    endpoint: 'https://s3.example.com/',
    bucket: 'b',
    accessKeyId: 'AKIAEXAMPLE',
    secretAccessKey: 'very-secret-value/123+abc',
  };

  it('encrypts the secret at rest and returns it only through the decrypting reads', async () => {
    const created = await repository.create(organizationId, { ...base, name: 'first' });
    expect(created).toMatchObject({
      name: 'first',
      endpoint: 'https://s3.example.com',
      region: 'us-east-1',
      isDefault: true,
      forcePathStyle: true,
    });
    expect(JSON.stringify(created)).not.toContain(base.secretAccessKey);
    const raw = await db.knex('storage_configs').where('id', created.id).first();
    expect(raw.secret_encrypted).toMatch(/^v1:/);
    expect(raw.secret_encrypted).not.toContain(base.secretAccessKey);
    expect(JSON.stringify(await repository.list(organizationId))).not.toContain('secret');
    expect((await repository.getDefaultDecrypted(organizationId))?.secretAccessKey).toBe(base.secretAccessKey);
    // Another key cannot read it.
    const other = new StorageConfigRepository(db, SecretBox.fromSetting(randomBytes(32).toString('base64')));
    await expect(other.getDecrypted(organizationId, created.id)).rejects.toThrow(StorageEncryptionError);
  });

  it('keeps exactly one default when one is set, and none after the default is deleted', async () => {
    const second = await repository.create(organizationId, { ...base, name: 'second' });
    expect(second.isDefault).toBe(false);
    const third = await repository.create(organizationId, { ...base, name: 'third', isDefault: true });
    const defaults = async () => (await repository.list(organizationId)).filter((c) => c.isDefault).map((c) => c.name);
    expect(await defaults()).toEqual(['third']);
    expect(await repository.setDefault(organizationId, 'second')).toBe(true);
    expect(await defaults()).toEqual(['second']);
    expect(await repository.setDefault(organizationId, second.id)).toBe(true);
    expect(await defaults()).toEqual(['second']);
    expect(await repository.setDefault(organizationId, 'missing')).toBe(false);
    expect(await repository.delete(organizationId, 'second')).toBe(true);
    expect(await defaults()).toEqual([]);
    expect(await repository.getDefaultDecrypted(organizationId)).toBeUndefined();
    expect(await repository.delete(organizationId, third.id)).toBe(true);
    expect(await repository.delete(organizationId, third.id)).toBe(false);
  });

  it('refuses duplicate names and bad endpoints, and explains the missing STORAGE_ENCRYPTION_KEY', async () => {
    await repository.create(organizationId, { ...base, name: 'dup' });
    await expect(repository.create(organizationId, { ...base, name: 'dup' })).rejects.toThrow(
      'a storage configuration named "dup" already exists',
    );
    await expect(repository.create(organizationId, { ...base, name: 'bad', endpoint: 'ftp://x' })).rejects.toThrow(
      'endpoint must be an http:// or https:// URL',
    );
    const keyless = new StorageConfigRepository(db, undefined);
    await expect(keyless.create(organizationId, { ...base, name: 'keyless' })).rejects.toThrow(/STORAGE_ENCRYPTION_KEY/);
  });
});

describe('egress policy for storage endpoints (ALLOW_PRIVATE_NETWORK=false)', () => {
  const policy = { allowPrivateNetwork: false, allowList: new EgressAllowList([]) };
  const uploader = new StorageUploader({ connectTimeoutMs: 1_000, requestTimeoutMs: 2_000, policy, resolve: systemResolver });
  const target = (endpoint: string): StorageTarget => ({
    endpoint,
    bucket: 'b',
    region: 'us-east-1',
    accessKeyId: 'a',
    secretAccessKey: 's',
    forcePathStyle: true,
    source: { kind: 'request' },
  });
  const file = { requestId: '00000000-0000-4000-8000-000000000000', extension: 'png', mime: 'image/png', body: Buffer.from('x') };

  for (const endpoint of [
    'http://127.0.0.1:9000',
    'http://[::1]:9000',
    'http://169.254.169.254',
    'http://10.1.2.3:9000',
    'http://localhost:9000',
  ]) {
    it(`refuses ${endpoint} with 400 INVALID_INPUT`, async () => {
      const error = await uploader.upload(target(endpoint), file).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe('INVALID_INPUT');
      expect((error as ApiError).message).toBe(
        'requestStorageEndpoint: the destination is not allowed (only public internet addresses can be reached)',
      );
    });
  }

  it('checks the address connected to, not only the one checked first (a name that turns private)', async () => {
    // First answer public (the early check passes), then private (the connection's lookup refuses).
    let calls = 0;
    const rebinding = async () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']);
    const guarded = new StorageUploader({ connectTimeoutMs: 1_000, requestTimeoutMs: 2_000, policy, resolve: rebinding });
    const error = await guarded.upload(target('https://rebind.example:9000'), file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(calls).toBe(2);
    expect((error as ApiError).code).toBe('INVALID_INPUT');
    expect((error as ApiError).message).toMatch(/the destination is not allowed/);
  });

  it('names the organization configuration whose endpoint is refused', async () => {
    const error = await uploader.upload({ ...target('http://10.0.0.1'), source: { kind: 'organization', name: 'intranet' } }, file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as ApiError).message).toBe(
      'storage configuration "intranet": the destination is not allowed (only public internet addresses can be reached)',
    );
  });
});

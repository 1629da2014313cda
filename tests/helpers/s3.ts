import { registerFixtureAddress } from './fixture-server.js';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import accounts from 's3rver/lib/models/account.js';
import S3Error from 's3rver/lib/models/error.js';

export interface TestS3 {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A client with the right credentials, for assertions. */
  client: S3Client;
  getObject(key: string, bucket?: string): Promise<{ bytes: Buffer; contentType: string | undefined }>;
  listKeys(bucket?: string): Promise<string[]>;
  stop(): Promise<void>;
}

const rfc3986 = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256Hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');

function canonicalQuery(rawQuery: string): string {
  if (!rawQuery) return '';
  return rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      const name = decodeURIComponent(at < 0 ? pair : pair.slice(0, at));
      const value = at < 0 ? '' : decodeURIComponent(pair.slice(at + 1).replace(/\+/g, ' '));
      return [rfc3986(name), rfc3986(value)] as const;
    })
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/**
 * s3rver accepts any Signature V4 (it only checks that the access key id exists), so this checks
 * the signature the way S3 does, with the secret registered for the key id: a wrong secret then
 * fails with SignatureDoesNotMatch like on real S3.
 */
function verifySignatureV4(secrets: Map<string, string>) {
  return async (
    ctx: { method: string; url: string; headers: Record<string, string | string[] | undefined> },
    next: () => Promise<void>,
  ) => {
    const header = (name: string) => {
      const value = ctx.headers[name];
      return Array.isArray(value) ? value.join(',') : value;
    };
    const authorization = header('authorization') ?? '';
    const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(authorization);
    if (!match) return next();
    const [, accessKeyId, scope, signedHeaders, signature] = match as unknown as [string, string, string, string, string];
    const secret = secrets.get(accessKeyId);
    if (secret === undefined) return next(); // unknown key: s3rver answers InvalidAccessKeyId
    const [path, query = ''] = ctx.url.split('?') as [string, string?];
    const canonicalHeaders = signedHeaders
      .split(';')
      .map((name) => `${name}:${(header(name) ?? '').trim().replace(/\s+/g, ' ')}\n`)
      .join('');
    const canonicalRequest = [
      ctx.method,
      path,
      canonicalQuery(query),
      canonicalHeaders,
      signedHeaders,
      header('x-amz-content-sha256') ?? 'UNSIGNED-PAYLOAD',
    ].join('\n');
    const amzDate = header('x-amz-date') ?? '';
    const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
    const [date = '', region = '', service = ''] = scope.split('/');
    const signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
    const expected = hmac(signingKey, stringToSign).toString('hex');
    if (!timingSafeEqual(Buffer.from(expected), Buffer.from(signature))) {
      throw new S3Error(
        'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
      );
    }
    return next();
  };
}

/**
 * A real S3-compatible server (s3rver) on 127.0.0.1, port 0, storing into a temp directory, with
 * its buckets and one access key pair whose signatures are verified.
 */
export async function startS3(
  options: { bucket?: string; extraBuckets?: string[]; accessKeyId?: string; secretAccessKey?: string } = {},
): Promise<TestS3> {
  const bucket = options.bucket ?? 'captures';
  const buckets = [bucket, ...(options.extraBuckets ?? [])];
  const accessKeyId = options.accessKeyId ?? `test-key-${Math.random().toString(36).slice(2, 10)}`;
  const secretAccessKey = options.secretAccessKey ?? `test-secret-${Math.random().toString(36).slice(2)}`;
  const region = 'us-east-1';
  const directory = mkdtempSync(join(tmpdir(), 'daguerre-s3-'));
  accounts.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  server.middleware.unshift(verifySignatureV4(new Map([[accessKeyId, secretAccessKey]])));
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  registerFixtureAddress(`127.0.0.1:${address.port}`);
  const client = new S3Client({
    endpoint,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    bucket,
    region,
    accessKeyId,
    secretAccessKey,
    client,
    async getObject(key, inBucket = bucket) {
      const object = await client.send(new GetObjectCommand({ Bucket: inBucket, Key: key }));
      return { bytes: Buffer.from(await object.Body!.transformToByteArray()), contentType: object.ContentType };
    },
    async listKeys(inBucket = bucket) {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: inBucket }));
      return (listed.Contents ?? []).map((entry) => entry.Key!);
    },
    async stop() {
      client.destroy();
      await server.close();
      accounts.DUMMY_ACCOUNT.revokeAccessKey(accessKeyId);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A TCP server that accepts connections and never answers: a storage endpoint that hangs. */
export async function startSilentServer(): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  registerFixtureAddress(`127.0.0.1:${(server.address() as AddressInfo).port}`);
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  // Allowed by the network policy, so the storage client's own failure is what a test sees.
  registerFixtureAddress(`127.0.0.1:${port}`);
  return port;
}

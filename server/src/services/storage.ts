import { randomUUID } from 'node:crypto';
import { Agent as HttpAgent, type AgentOptions } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { S3Client } from '@aws-sdk/client-s3';
import { ApiError } from '../errors.js';
import { loadS3Sdk, type S3Sdk } from './s3-sdk.js';
import { isPublicAddress, type AddressPolicy } from '../security/address-policy.js';
import { bareHost, checkedAddress, DestinationRefusedError } from '../security/destination-check.js';
import type { Resolver } from '../security/resolver.js';
import { guardedLookup } from '../security/target-policy.js';
import type { StorageTarget } from '../store/storage-target.js';
import { type FailurePurpose, storageFailure, storageNotAllowed } from './storage-failure.js';

export type { StorageTarget };

export interface StorageOptions {
  /** Bound on opening the TCP/TLS connection (STORAGE_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  /** Bound on the whole request once connected (STORAGE_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** The egress policy of the captures (ALLOW_PRIVATE_NETWORK, allow list): storage endpoints obey it too. */
  policy: AddressPolicy;
  resolve: Resolver;
}

export interface UploadRequest {
  requestId: string;
  extension: string;
  mime: string;
  body: Buffer;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
  /** Date the object key is filed under (UTC); default now. */
  date?: Date;
}

const endpointPort = (url: URL) => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);

/**
 * Uploads captures to S3-compatible storage with the target's static credentials only (never the
 * SDK's default credential chain, which would pick up the server's own identity), bounded
 * timeouts and a single attempt, so a broken endpoint fails the request in predictable time.
 */
export class StorageUploader {
  constructor(private readonly options: StorageOptions) {}

  /** Object key: captures/<yyyy>/<mm>/<dd>/<requestId>.<ext> (UTC date). */
  static objectKey(requestId: string, extension: string, date = new Date()): string {
    const yyyy = String(date.getUTCFullYear());
    const mm = String(date.getUTCMonth() + 1).padStart(2, '0');
    const dd = String(date.getUTCDate()).padStart(2, '0');
    return `captures/${yyyy}/${mm}/${dd}/${requestId}.${extension}`;
  }

  /** Path style `${endpoint}/${bucket}/${key}`, or virtual-hosted when the configuration turned path style off. */
  static objectUrl(target: StorageTarget, key: string): string {
    const endpoint = target.endpoint.replace(/\/+$/, '');
    const bucket = encodeURIComponent(target.bucket);
    // Through URL so that the value is always header-safe (punycode host, percent-encoded path).
    if (target.forcePathStyle) return new URL(`${endpoint}/${bucket}/${key}`).href;
    const url = new URL(endpoint);
    return new URL(`${url.protocol}//${bucket}.${url.host}${url.pathname.replace(/\/+$/, '')}/${key}`).href;
  }

  /**
   * Refuses, before any work is done, an endpoint the egress policy does not allow (400, like a
   * capture target). A courtesy for a clean early answer: the agents' guarded lookup is the boundary.
   * A name that does not resolve passes here and fails the upload as "endpoint unreachable".
   */
  async checkDestination(target: StorageTarget): Promise<void> {
    const url = new URL(target.endpoint);
    if (url.username || url.password) {
      throw new ApiError('INVALID_INPUT', 'The storage endpoint must not carry credentials in its URL; use the access key fields');
    }
    try {
      const address = await checkedAddress(this.options.policy, this.options.resolve, bareHost(url.hostname), endpointPort(url));
      // Object data must not cross the internet in clear: plain http only for a private-network endpoint.
      if (url.protocol !== 'https:' && isPublicAddress(address)) {
        throw new ApiError(
          'INVALID_INPUT',
          'The storage endpoint must use https:// (plain http is accepted only for endpoints on a private network)',
        );
      }
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (this.options.policy.allowPrivateNetwork && error instanceof DestinationRefusedError) return;
      if (error instanceof DestinationRefusedError && !/does not resolve/.test(error.reason)) throw storageNotAllowed(target);
      if (!(error instanceof DestinationRefusedError)) throw error;
    }
  }

  async upload(target: StorageTarget, file: UploadRequest): Promise<{ url: string; key: string }> {
    await this.checkDestination(target);
    const key = StorageUploader.objectKey(file.requestId, file.extension, file.date);
    await this.send(target, file.signal, (client, abortSignal, s3) =>
      client.send(
        new s3.PutObjectCommand({
          Bucket: target.bucket,
          Key: key,
          Body: file.body,
          ContentType: file.mime,
          ContentLength: file.body.length,
        }),
        { abortSignal },
      ),
    );
    return { url: StorageUploader.objectUrl(target, key), key };
  }

  /** Reads an object back (the file of an async capture that was stored in the organization's storage). */
  async download(target: StorageTarget, key: string): Promise<Buffer> {
    await this.checkDestination(target);
    let body: Buffer | undefined;
    await this.send(
      target,
      undefined,
      async (client, abortSignal, s3) => {
        const object = await client.send(new s3.GetObjectCommand({ Bucket: target.bucket, Key: key }), { abortSignal });
        body = Buffer.from(await object.Body!.transformToByteArray());
      },
      'download',
    );
    return body!;
  }

  /** The dashboard's "connection test": the bucket exists and the credentials are accepted. */
  async checkConnection(target: StorageTarget, signal?: AbortSignal): Promise<void> {
    await this.checkDestination(target);
    await this.send(target, signal, (client, abortSignal, s3) =>
      client.send(new s3.HeadBucketCommand({ Bucket: target.bucket }), { abortSignal }),
    );
  }

  /**
   * The dashboard's "Test connection": writes a small probe object and deletes it again, so a pass
   * means the credentials may really write (HEAD alone passes with read-only keys). Failures read
   * "Connection test failed: <reason> (<which storage>)" with the same reasons as uploads.
   */
  async probeWrite(target: StorageTarget, signal?: AbortSignal): Promise<{ key: string }> {
    await this.checkDestination(target);
    const key = `daguerre-connection-test/${randomUUID()}.txt`;
    const body = Buffer.from('Daguerre connection test; safe to delete.\n', 'utf8');
    await this.send(
      target,
      signal,
      (client, abortSignal, s3) =>
        client.send(
          new s3.PutObjectCommand({ Bucket: target.bucket, Key: key, Body: body, ContentType: 'text/plain', ContentLength: body.length }),
          { abortSignal },
        ),
      'probe',
    );
    await this.send(
      target,
      signal,
      (client, abortSignal, s3) => client.send(new s3.DeleteObjectCommand({ Bucket: target.bucket, Key: key }), { abortSignal }),
      'probe-delete',
    );
    return { key };
  }

  private async send(
    target: StorageTarget,
    signal: AbortSignal | undefined,
    call: (client: S3Client, abortSignal: AbortSignal, s3: S3Sdk['s3']) => Promise<unknown>,
    purpose: FailurePurpose = 'upload',
  ) {
    const { policy, resolve } = this.options;
    const lookup: AgentOptions = policy.allowPrivateNetwork
      ? {}
      : { lookup: guardedLookup(policy, resolve, endpointPort(new URL(target.endpoint))) as AgentOptions['lookup'] };
    const { s3, NodeHttpHandler } = await loadS3Sdk();
    const client = new s3.S3Client({
      endpoint: target.endpoint,
      region: target.region,
      forcePathStyle: target.forcePathStyle,
      credentials: { accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey },
      maxAttempts: 1,
      // Many S3-compatible servers reject the CRC checksums newer SDKs add by default.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: new NodeHttpHandler({
        connectionTimeout: this.options.connectTimeoutMs,
        requestTimeout: this.options.requestTimeoutMs,
        throwOnRequestTimeout: true,
        httpAgent: new HttpAgent({ keepAlive: false, ...lookup }),
        httpsAgent: new HttpsAgent({ keepAlive: false, ...lookup }),
      }),
    });
    // A last bound in case a stage escapes the handler's own timeouts.
    const overall = AbortSignal.timeout(this.options.connectTimeoutMs + this.options.requestTimeoutMs + 1_000);
    const abortSignal = signal ? AbortSignal.any([signal, overall]) : overall;
    try {
      await call(client, abortSignal, s3);
    } catch (error) {
      if (signal?.aborted)
        throw new ApiError('OPERATION_FAILED', 'The client disconnected before the upload to storage finished; nothing was charged');
      throw storageFailure(
        target,
        error,
        overall.aborted,
        purpose,
        this.options,
        error instanceof s3.S3ServiceException ? error : undefined,
      );
    } finally {
      client.destroy();
    }
  }
}

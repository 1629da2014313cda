import { createReadStream } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { loadS3Sdk, type S3Sdk } from '../services/s3-sdk.js';
import type { StorageTarget } from '../store/storage-target.js';
import { ignoreBecause } from '../ignore-error.js';

/** An open result file: its bytes as a stream and its size (for Content-Length). */
export interface OpenedFile {
  stream: Readable;
  size: number;
}

/**
 * Where the files of finished async jobs live (docs/async-jobs.md): the deployment's object
 * storage, or a local directory in the embedded default. Keys are `<jobId>/<attempt token>.<ext>`,
 * so a file an attempt wrote but could not commit never overwrites the file of the attempt that
 * did.
 */
export interface ResultFiles {
  /** For logs and /ready: where files go (never credentials). */
  readonly description: string;
  put(key: string, body: Buffer, mime: string): Promise<void>;
  /** The file, or undefined when it does not exist (expired, swept). */
  open(key: string): Promise<OpenedFile | undefined>;
  remove(key: string): Promise<void>;
}

export const resultKey = (jobId: string, token: string, extension: string) => `${jobId}/${token}.${extension}`;

/** The embedded default: files under RESULTS_DIR, written to a temporary name then renamed (a reader never sees half a file). */
export class LocalResultFiles implements ResultFiles {
  readonly description: string;
  private readonly root: string;

  constructor(directory: string) {
    this.root = resolve(directory);
    this.description = `directory ${this.root}`;
  }

  private path(key: string): string {
    const path = resolve(this.root, key);
    // Keys are made here from job ids and tokens; the check keeps a bad key inside the directory anyway.
    if (!path.startsWith(this.root + sep)) throw new Error(`result key outside the results directory: ${key}`);
    return path;
  }

  async put(key: string, body: Buffer): Promise<void> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const temporary = `${path}.partial`;
    await writeFile(temporary, body, { mode: 0o600 });
    await rename(temporary, path);
  }

  async open(key: string): Promise<OpenedFile | undefined> {
    const path = this.path(key);
    try {
      const info = await stat(path);
      return { stream: createReadStream(path), size: info.size };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    const path = this.path(key);
    await rm(path, { force: true });
    // The job's folder goes with its last file.
    await rmdir(dirname(path)).catch(ignoreBecause('the folder still holds other files of its job'));
  }

  /** Files older than `olderThanMs` (attempts that wrote a file and died before their commit). */
  async oldFiles(olderThanMs: number, now = Date.now()): Promise<string[]> {
    const found: string[] = [];
    const folders = await readdir(this.root).catch(() => [] as string[]);
    for (const folder of folders) {
      // Monitor runs' files (monitors/<monitorId>/<runId>.png) are kept and deleted by their monitor.
      if (folder === 'monitors') continue;
      const files = await readdir(join(this.root, folder)).catch(() => [] as string[]);
      for (const file of files) {
        const info = await stat(join(this.root, folder, file)).catch(ignoreBecause('removed meanwhile: nothing left to sweep'));
        if (info && now - info.mtimeMs > olderThanMs) found.push(`${folder}/${file}`);
      }
    }
    return found;
  }
}

/** The deployment's results bucket: a storage target of the operator's, plus where its objects go. */
export interface S3ResultSettings extends Omit<StorageTarget, 'source'> {
  /** Objects go under this prefix in the bucket. */
  prefix: string;
  requestTimeoutMs: number;
}

/**
 * The deployment's S3-compatible bucket (RESULTS_S3_*), shared by every API instance and worker.
 * It is the operator's own store, named in configuration, so it is not subject to the egress policy
 * of capture targets (which may well refuse the private address it lives at).
 */
export class S3ResultFiles implements ResultFiles {
  readonly description: string;
  /** Made at the first file, with the SDK (loaded then: services/s3-sdk.ts). */
  private connecting: Promise<{ client: S3Client; s3: S3Sdk['s3'] }> | undefined;

  constructor(private readonly settings: S3ResultSettings) {
    this.description = `bucket ${settings.bucket} at ${new URL(settings.endpoint).host}`;
  }

  private connect(): Promise<{ client: S3Client; s3: S3Sdk['s3'] }> {
    const { settings } = this;
    this.connecting ??= loadS3Sdk().then(({ s3, NodeHttpHandler }) => ({
      s3,
      client: new s3.S3Client({
        endpoint: settings.endpoint,
        region: settings.region,
        forcePathStyle: settings.forcePathStyle,
        credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        requestHandler: new NodeHttpHandler({ connectionTimeout: 5_000, requestTimeout: settings.requestTimeoutMs }),
      }),
    }));
    return this.connecting;
  }

  private key(key: string): string {
    return `${this.settings.prefix}${key}`;
  }

  async put(key: string, body: Buffer, mime: string): Promise<void> {
    const { client, s3 } = await this.connect();
    await client.send(
      new s3.PutObjectCommand({
        Bucket: this.settings.bucket,
        Key: this.key(key),
        Body: body,
        ContentType: mime,
        ContentLength: body.length,
      }),
      {
        abortSignal: AbortSignal.timeout(this.settings.requestTimeoutMs),
      },
    );
  }

  async open(key: string): Promise<OpenedFile | undefined> {
    const { client, s3 } = await this.connect();
    try {
      // No overall deadline here: the body streams to a client at the client's pace (the handler's idle timeout bounds a stall).
      const object = await client.send(new s3.GetObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }));
      return { stream: object.Body as Readable, size: Number(object.ContentLength ?? 0) };
    } catch (error) {
      if (error instanceof s3.NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    const { client, s3 } = await this.connect();
    await client.send(new s3.DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }), {
      abortSignal: AbortSignal.timeout(this.settings.requestTimeoutMs),
    });
  }
}

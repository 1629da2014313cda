import type { CaptureOptions } from '@daguerre/contract';
import { ApiError, errors } from '../errors.js';
import { StorageEncryptionError } from '../security/secret-box.js';
import type { LedgerEntry } from '../store/credit-repository.js';
import type { StorageConfigRepository } from '../store/storage-config-repository.js';
import type { AiResult } from './ai-analysis.js';
import type { CaptureAnalysis } from './capture-analysis.js';
import type { CaptureCommand, CaptureFile } from './capture-types.js';
import type { CachedRender } from './response-cache.js';
import type { StorageTarget, StorageUploader } from './storage.js';

/** What the per-request steps after rendering add to the answer. */
export interface Delivery {
  storageUrl?: string;
  storedIn?: CaptureFile['storedIn'];
  aiResult?: AiResult;
}

/** What a delivery needs of its capture: the request, whose it is, where its timings go, and what it asked for after the render. */
export interface DeliveryRequest {
  command: CaptureCommand;
  entry: Pick<LedgerEntry, 'organizationId'>;
  timings: Record<string, number>;
  analysis?: { prompt: string; providerKey: string; schema?: string };
  storage?: StorageTarget;
}

/**
 * The steps of a capture after its render, per request (a cache hit gets them too): the AI
 * analysis, then the upload to the request's or the organization's storage (docs/caching-storage-ai.md).
 */
export class CaptureDelivery {
  constructor(
    private readonly analysis: CaptureAnalysis,
    private readonly storage: StorageUploader,
    private readonly storageConfigs: StorageConfigRepository,
  ) {}

  /**
   * The request's storage: its own requestStorage* settings, else the organization's default
   * configuration, else none. Resolved before any credit is reserved, so a broken setting costs nothing.
   */
  async storageTarget(organizationId: string, options: CaptureOptions): Promise<StorageTarget | undefined> {
    let target: StorageTarget | undefined;
    if (options.requestStorageEnabled) {
      target = {
        endpoint: options.requestStorageEndpoint!,
        bucket: options.requestStorageBucket!,
        region: options.requestStorageRegion,
        accessKeyId: options.requestStorageAccessKeyId!,
        secretAccessKey: options.requestStorageSecretAccessKey!,
        forcePathStyle: true,
        source: { kind: 'request' },
      };
    } else {
      try {
        target = await this.storageConfigs.getDefaultDecrypted(organizationId);
      } catch (error) {
        if (error instanceof StorageEncryptionError) {
          throw new ApiError(
            'OPERATION_FAILED',
            "Upload to storage failed: the organization's default storage configuration cannot be read by this server; nothing was charged",
            { logDetail: { stage: 'storage', organizationId, reason: error.message } },
          );
        }
        throw errors.storeUnavailable('database', error);
      }
    }
    if (target) await this.storage.checkDestination(target);
    return target;
  }

  /** The per-request steps after the render: AI analysis, then the upload (so a stored object always belongs to a success). */
  async deliver(job: DeliveryRequest, render: CachedRender): Promise<Delivery> {
    const { command, timings } = job;
    const delivery: Delivery = {};
    if (job.analysis) {
      const started = Date.now();
      const { cacheEnabled, cacheTtl } = command.options;
      delivery.aiResult = await this.analysis.run(job.analysis, {
        organizationId: job.entry.organizationId,
        render,
        cache: { enabled: cacheEnabled, ttlSeconds: cacheTtl },
        signal: command.signal,
      });
      timings.ai = Date.now() - started;
    }
    if (job.storage) {
      const started = Date.now();
      const uploaded = await this.storage.upload(job.storage, {
        requestId: command.requestId,
        extension: render.extension,
        mime: render.mime,
        body: render.buffer,
        signal: command.signal,
      });
      delivery.storageUrl = uploaded.url;
      if (job.storage.source.kind === 'organization') delivery.storedIn = { configName: job.storage.source.name, key: uploaded.key };
      timings.storage = Date.now() - started;
    }
    return delivery;
  }
}

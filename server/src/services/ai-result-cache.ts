import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AiResult } from './ai-analysis.js';

/**
 * AI answers kept by image and question (docs/caching-storage-ai.md), for requests with
 * cacheEnabled: the same picture asked the same prompt (and schema, of the same model) is not sent
 * to the provider again within the request's cacheTtl. Scoped to the organization and to the
 * provider key (as a hash, never the key), so a wrong key is never answered from another key's
 * success.
 */
export interface AiCacheKeyParts {
  organizationId: string;
  providerKey: string;
  model: string;
  prompt: string;
  schema?: string;
  image: Buffer;
}

export class AiResultCache {
  private readonly entries = new LRUCache<string, { result: AiResult; at: number }>({ max: 1_000, ttl: 86_400_000, ttlAutopurge: false });

  static keyFor(parts: AiCacheKeyParts): string {
    const hash = (value: string | Buffer) => createHash('sha256').update(value).digest('hex');
    return hash(
      [parts.organizationId, hash(parts.providerKey), parts.model, hash(parts.prompt), hash(parts.schema ?? ''), hash(parts.image)].join(
        '\n',
      ),
    );
  }

  get(key: string, maxAgeSeconds: number): AiResult | undefined {
    const entry = this.entries.get(key);
    return entry && Date.now() - entry.at <= maxAgeSeconds * 1000 ? entry.result : undefined;
  }

  set(key: string, result: AiResult, ttlSeconds: number): void {
    this.entries.set(key, { result, at: Date.now() }, { ttl: ttlSeconds * 1000 });
  }
}

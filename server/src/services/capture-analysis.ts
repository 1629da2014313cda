import { MIME_TYPES } from '@daguerre/contract';
import { ApiError } from '../errors.js';
import type { AiAnalyzer, AiResult } from './ai-analysis.js';
import { AiResultCache } from './ai-result-cache.js';

/** What one request asks the AI: its prompt, the provider key the rule chose, and openaiSchema. */
export interface AnalysisAsk {
  prompt: string;
  providerKey: string;
  schema?: string;
}

export interface AnalysisTarget {
  organizationId: string;
  /** The file; a pdf or a content format is analysed from `analysisPng`, a PNG of the same page. */
  render: { buffer: Buffer; mime: string; analysisPng?: Buffer };
  cache: { enabled: boolean; ttlSeconds: number };
  signal: AbortSignal;
}

/**
 * The AI step of a capture (docs/caching-storage-ai.md; openaiSchema in docs/page-insight.md): picks
 * the image, answers from the AI cache when the request has cacheEnabled and the same picture was
 * asked the same question, else asks the provider.
 */
export class CaptureAnalysis {
  private readonly cache = new AiResultCache();

  constructor(private readonly ai: AiAnalyzer) {}

  async run(ask: AnalysisAsk, target: AnalysisTarget): Promise<AiResult> {
    const { render } = target;
    const notImage = !render.mime.startsWith('image/');
    const image = notImage ? render.analysisPng : render.buffer;
    if (!image) throw new ApiError('INTERNAL_ERROR', 'AI analysis failed: no image of the page was kept for the file; nothing was charged');
    const { prompt, providerKey, schema } = ask;
    const key = target.cache.enabled
      ? AiResultCache.keyFor({
          organizationId: target.organizationId,
          providerKey,
          model: this.ai.model,
          prompt,
          image,
          ...(schema ? { schema } : {}),
        })
      : undefined;
    const cached = key ? this.cache.get(key, target.cache.ttlSeconds) : undefined;
    if (cached) return cached;
    const result = await this.ai.analyze({
      prompt,
      image,
      imageMime: notImage ? MIME_TYPES.png : render.mime,
      providerKey,
      organizationId: target.organizationId,
      signal: target.signal,
      ...(schema ? { schema } : {}),
    });
    if (key) this.cache.set(key, result, target.cache.ttlSeconds);
    return result;
  }
}

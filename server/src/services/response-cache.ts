import { createHash } from 'node:crypto';
import { paginatedPdfSettings, type CaptureOptions, type CaptureQuality, type PageMetadata, type PageReport } from '@daguerre/contract';
import { LRUCache } from 'lru-cache';
import { ClientGoneError } from '../capture/capture-error.js';
import { ignoreBecause } from '../ignore-error.js';

/**
 * Options that do not change the rendered file: secrets, how the answer is delivered, the cache
 * settings themselves, storage and the AI prompt (upload and analysis run per request, also on a hit).
 */
export const CACHE_KEY_EXCLUDED_FIELDS = [
  'apiKey',
  'openaiApiKey',
  'openaiPrompt',
  'openaiSchema',
  'proxyPassword',
  'returnFile',
  'cacheEnabled',
  'cacheTtl',
  'requestStorageEnabled',
  'requestStorageEndpoint',
  'requestStorageAccessKeyId',
  'requestStorageSecretAccessKey',
  'requestStorageBucket',
  'requestStorageRegion',
] as const satisfies readonly (keyof CaptureOptions)[];

/** A successful render, as kept in the cache and shared with concurrent identical requests. */
export interface CachedRender {
  buffer: Buffer;
  mime: string;
  extension: string;
  /** The file name of the first response, repeated on hits so the headers match. */
  fileName: string;
  /** For pdf: a PNG of the same page, for AI analysis on later hits. */
  analysisPng?: Buffer;
  /** What the first capture saw (status, final URL, size, truncation), repeated on hits. */
  page: PageReport;
  /** The quality report and metadata (docs/page-insight.md) of the first capture, repeated on hits. */
  quality: CaptureQuality;
  metadata?: PageMetadata;
  /** Epoch ms of the render. */
  renderedAt: number;
}

/** Bytes an entry is charged for beyond its buffers (object, key, bookkeeping). */
const ENTRY_OVERHEAD_BYTES = 512;

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .sort()
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

export interface Flight {
  promise: Promise<CachedRender>;
  resolve(render: CachedRender): void;
  reject(error: unknown): void;
}

/** Waits for another request's render, unless this request's client leaves first. */
export function waitForFlight(flight: Flight, signal: AbortSignal): Promise<CachedRender> {
  if (signal.aborted) return Promise.reject(new ClientGoneError());
  let onAbort: (() => void) | undefined;
  const gone = new Promise<never>((_, reject) => {
    onAbort = () => reject(new ClientGoneError());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([flight.promise, gone]).finally(() => signal.removeEventListener('abort', onAbort!));
}

/**
 * The in-process first tier of response caching: an LRU bounded by bytes (CACHE_MAX_BYTES), each
 * entry expiring after the cacheTtl of the request that rendered it, plus a single-flight map so
 * that identical requests arriving together render once. Keys are scoped to the organization.
 */
export class ResponseCache {
  private readonly entries: LRUCache<string, CachedRender> | undefined;
  private readonly flights = new Map<string, Flight>();

  constructor(readonly maxBytes: number) {
    this.entries =
      maxBytes > 0
        ? new LRUCache<string, CachedRender>({
            maxSize: maxBytes,
            sizeCalculation: (entry) => entry.buffer.length + (entry.analysisPng?.length ?? 0) + ENTRY_OVERHEAD_BYTES,
            // Every entry gets its own ttl at set(); this turns on ttl tracking.
            ttl: 3_600_000,
            ttlAutopurge: false,
          })
        : undefined;
  }

  /** sha256 over the organization id and the options that change the output, normalized (defaults applied, keys sorted). */
  static keyFor(organizationId: string, options: CaptureOptions): string {
    const relevant: Record<string, unknown> = { ...options };
    for (const field of CACHE_KEY_EXCLUDED_FIELDS) delete relevant[field];
    // The pdf options count as the settings they resolve to (pdfFormat=A4 is the default A4), and only for pdf.
    for (const field of Object.keys(relevant)) if (field.startsWith('pdf') && field !== 'pdfPageLayout') delete relevant[field];
    if (options.format === 'pdf') {
      relevant.pdfPrintBackground = options.pdfPrintBackground;
      if (options.pdfPageLayout === 'paginated') relevant.pdfPaginated = paginatedPdfSettings(options);
    }
    const digest = createHash('sha256')
      .update(organizationId)
      .update('\n')
      .update(JSON.stringify(canonical(relevant)))
      .digest('hex');
    return `${organizationId}:${digest}`;
  }

  /** The entry when present and not older than `maxAgeSeconds` (the asking request's cacheTtl). */
  get(key: string, maxAgeSeconds: number): CachedRender | undefined {
    const entry = this.entries?.get(key);
    if (!entry) return undefined;
    if (Date.now() - entry.renderedAt > maxAgeSeconds * 1000) return undefined;
    return entry;
  }

  set(key: string, entry: CachedRender, ttlSeconds: number): void {
    this.entries?.set(key, entry, { ttl: ttlSeconds * 1000 });
  }

  /** The render in progress for this key, if any. */
  flight(key: string): Flight | undefined {
    return this.flights.get(key);
  }

  /** Registers this caller as the one rendering `key`; others wait on the returned flight. */
  beginFlight(key: string): Flight {
    let resolve!: (render: CachedRender) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<CachedRender>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Nobody may be waiting: a failed flight must not become an unhandled rejection.
    promise.catch(ignoreBecause('nobody may be waiting; those who are see the failure'));
    const flight: Flight = { promise, resolve, reject };
    this.flights.set(key, flight);
    return flight;
  }

  endFlight(key: string, flight: Flight): void {
    if (this.flights.get(key) === flight) this.flights.delete(key);
  }

  get stats() {
    return {
      entries: this.entries?.size ?? 0,
      bytes: this.entries?.calculatedSize ?? 0,
      maxBytes: this.maxBytes,
      inFlight: this.flights.size,
    };
  }
}

import type { CaptureOptions, CaptureQuality, PageMetadata, PageReport } from '@rendershot/contract';
import type { AiResult } from './ai-analysis.js';
import type { AuthenticatedKey } from './api-keys.js';

/** What goes into the capture service (one request) and what comes out (one file). */

export interface CaptureCommand {
  /** The request id of the HTTP request: one id in logs, headers, ledger and the JSON result. */
  requestId: string;
  key: AuthenticatedKey;
  options: CaptureOptions;
  /** X-OpenAI-Api-Key header, preferred over the openaiApiKey parameter. */
  providerKeyHeader?: string;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
  /** `async` for a job of POST /captures (marked in the ledger). */
  mode?: 'sync' | 'async';
}

export interface CaptureFile {
  requestId: string;
  fileName: string;
  mime: string;
  buffer: Buffer;
  processingTime: number;
  timings: Record<string, number>;
  /** Where the file was uploaded, when storage was used. */
  storageUrl?: string;
  /** The organization's storage configuration and object key, when the file was uploaded there. */
  storedIn?: { configName: string; key: string };
  aiResult?: AiResult;
  /** Set only when the request had cacheEnabled. */
  cache?: 'HIT' | 'MISS';
  /** What the capture saw: X-Target-Status, X-Final-Url, X-Capture-Truncated and data.page. */
  page: PageReport;
  /** The capture quality report: data.quality and X-Capture-Quality. */
  quality: CaptureQuality;
  /** With metadata=true: data.metadata. */
  metadata?: PageMetadata;
}

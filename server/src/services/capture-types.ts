import type { CaptureKind, CaptureOptions, CaptureQuality, PageMetadata, PageReport } from '@daguerre/contract';
import type { AiResult } from './ai-analysis.js';
import type { Page } from 'puppeteer-core';
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
  /** The face that sent it, for the request log: by default sync, or async for `mode: 'async'`. */
  kind?: CaptureKind;
  /**
   * Reads the page once it has loaded and been cleaned, before the shot (a monitor reads the
   * page's text here, so a run needs one capture, not two). Not run for an answer from the cache.
   */
  readPage?: (page: Page) => Promise<void>;
  /** The async job this capture renders: its reservation is filed under the job id. */
  jobId?: string;
  /**
   * Async jobs: records the file and the success, with the charge when `charged`, as one fact in
   * place of the plain commit. False when the job had already ended (another attempt won): the
   * reservation is then released and nothing is charged.
   */
  finish?: (finished: FinishedCapture) => Promise<boolean>;
}

/** A capture ready to be recorded: the render and what the steps after it added. */
export interface FinishedCapture {
  requestId: string;
  /** False for a cache hit: nothing was reserved, nothing is charged. */
  charged: boolean;
  credits: number;
  buffer: Buffer;
  mime: string;
  extension: string;
  fileName: string;
  page: PageReport;
  processingTime: number;
  storageUrl?: string;
  storedIn?: { configName: string; key: string };
  aiResult?: AiResult;
  /** The quality report, and the metadata with metadata=true (page-insight.ts). */
  quality?: CaptureQuality;
  metadata?: PageMetadata;
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

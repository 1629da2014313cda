import type { AiResult } from '../services/ai-analysis.js';
import type { CaptureOptions, CaptureQuality, PageMetadata, PageReport } from '@rendershot/contract';
import type { FairShare } from '../capture/fair-scheduler.js';

export const CAPTURE_QUEUE = 'captures';
export const WEBHOOK_QUEUE = 'webhooks';

/** What a capture job carries from the API to a worker (BullMQ job data, in Redis). */
export interface CaptureJobPayload {
  organizationId: string;
  keyId: string;
  options: CaptureOptions;
  /** The plan's share of the browser when the job was sent, so workers schedule it as /capture would. */
  fairShare?: FairShare;
  /** X-OpenAI-Api-Key of the request, preferred over openaiApiKey as for /capture. */
  providerKeyHeader?: string;
  webhookUrl?: string;
  /** The service's address as the caller reached it: statusUrl and fileUrl are built on it, also by workers. */
  baseUrl: string;
  /**
   * Request ids of the attempts that reserved credits. A worker killed mid-job leaves its
   * reservation behind; the attempt that takes the job over releases it first, so the job is charged once.
   */
  attemptRequestIds: string[];
}

/** Where the file of a succeeded job lives. */
export type StoredFile =
  | { where: 'results' }
  | { where: 'organization-storage'; configName: string; key: string };

/** A succeeded job's BullMQ return value. */
export interface CaptureJobOutcome {
  requestId: string;
  fileName: string;
  fileSize: number;
  processingTime: number;
  mime: string;
  storageUrl?: string;
  aiResult?: AiResult;
  page?: PageReport;
  /** Issue #33: the quality report, and the metadata with metadata=true. */
  quality?: CaptureQuality;
  metadata?: PageMetadata;
  file: StoredFile;
}

/** The failure a job records (the error a synchronous capture would have answered). */
export interface CaptureJobFailure {
  code: string;
  message: string;
}

/** A webhook delivery job: the body is fixed once, so every retry sends the same bytes under the same id. */
export interface WebhookDelivery {
  url: string;
  keyId: string;
  messageId: string;
  body: string;
}

/** Fields of CaptureOptions that hold secrets: removed from a job's data as soon as the job has ended. */
export const SECRET_OPTION_FIELDS = ['openaiApiKey', 'proxyPassword', 'proxyUsername', 'requestStorageSecretAccessKey', 'requestStorageAccessKeyId', 'headers', 'apiKey'] as const;

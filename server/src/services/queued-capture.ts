import type { AsyncCaptureOptions, BatchData, CaptureOptions, QueuedKind } from '@daguerre/contract';
import type { FairShare } from '../capture/pool/fair-scheduler.js';

/*
 * What an accepted async capture carries to the queue, and the two doors it goes through. The
 * submission service (capture-submission.ts) accepts; jobs/ queues (capture-jobs.ts,
 * capture-batches.ts). The types live here, the lower of the two layers (docs/architecture.md).
 */

/**
 * What a capture job carries from the API to a worker (BullMQ job data, in Redis). The job's record
 * (status, file, charge) is in the database; this copy exists only while the job is queued.
 */
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
  /** Who queued it, for the request log: POST /captures (async, the default), a bulk item, an MCP tool or a monitor. */
  kind?: QueuedKind;
}

/** A bulk request once accepted: its items are queued as jobs of their own (jobs/capture-batches.ts). */
export interface NewBatch {
  organizationId: string;
  keyId: string;
  items: AsyncCaptureOptions[];
  webhookUrl?: string;
  baseUrl: string;
  fairShare?: FairShare;
  providerKeyHeader?: string;
}

/** Records and queues one job; resolves to its id (jobs/capture-jobs.ts CaptureJobs). */
export interface JobQueue {
  enqueue(payload: CaptureJobPayload): Promise<string>;
}

/** Records a batch and queues its items (jobs/capture-batches.ts CaptureBatches). */
export interface BatchQueue {
  create(batch: NewBatch): Promise<BatchData>;
}

import type { CaptureJobData, JobStatus } from '@rendershot/contract';
import type { Job, JobState } from 'bullmq';
import { aiResultBody } from '../services/ai-analysis.js';
import type { CaptureJobFailure, CaptureJobOutcome, CaptureJobPayload } from './job-types.js';

const STATUS_OF: Partial<Record<JobState | 'unknown', JobStatus>> = {
  active: 'active',
  completed: 'succeeded',
  failed: 'failed',
};

const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : undefined);

/** The failure a worker recorded (JSON in BullMQ's failedReason), or a generic one for anything else. */
export function failureOf(job: Job): CaptureJobFailure {
  try {
    const parsed = JSON.parse(job.failedReason) as Partial<CaptureJobFailure>;
    if (typeof parsed.code === 'string' && typeof parsed.message === 'string') return { code: parsed.code, message: parsed.message };
  } catch {
    // BullMQ's own reasons (a job that stalled too often) are plain text.
  }
  return { code: 'OPERATION_FAILED', message: 'The capture failed; nothing was charged' };
}

/** `GET /captures/{jobId}`'s data: the same for the poller and the webhook. */
export function jobView(job: Job<CaptureJobPayload, CaptureJobOutcome>, state: JobState | 'unknown', fileUrl: string): CaptureJobData {
  const status = STATUS_OF[state] ?? 'queued';
  const view: CaptureJobData = { jobId: job.id!, status, createdAt: iso(job.timestamp)! };
  const startedAt = iso(job.processedOn);
  if (startedAt && status !== 'queued') view.startedAt = startedAt;
  const finishedAt = iso(job.finishedOn);
  if (finishedAt && (status === 'succeeded' || status === 'failed')) view.finishedAt = finishedAt;
  if (status === 'succeeded' && job.returnvalue) {
    const outcome = job.returnvalue;
    view.result = {
      fileName: outcome.fileName,
      fileSize: outcome.fileSize,
      processingTime: outcome.processingTime,
      mime: outcome.mime,
      fileUrl,
      ...(outcome.storageUrl ? { url: outcome.storageUrl } : {}),
      ...(outcome.aiResult ? { aiResult: aiResultBody(outcome.aiResult) } : {}),
      ...(outcome.page ? { page: outcome.page } : {}),
      ...(outcome.quality ? { quality: outcome.quality } : {}),
      ...(outcome.metadata ? { metadata: outcome.metadata } : {}),
    };
  }
  if (status === 'failed') view.error = failureOf(job);
  return view;
}

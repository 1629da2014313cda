import type { CaptureJobData, CaptureQuality, PageMetadata, PageReport } from '@daguerre/contract';
import { aiResultBody } from '../services/ai-analysis.js';
import type { JobRecord } from '../store/job-record.js';

const iso = (ms: number | null) => (ms ? new Date(ms).toISOString() : undefined);

/** A failure message always says what was charged: nothing. */
export function failureMessage(message: string): string {
  return /nothing (was|is) charged/i.test(message) ? message : `${message.replace(/[.\s]+$/, '')}; nothing was charged`;
}

/** `GET /captures/{jobId}`'s data, from the job's record: the same for the poller and the webhook. */
export function jobView(job: JobRecord, fileUrl: string): CaptureJobData {
  const view: CaptureJobData = { jobId: job.id, status: job.status, createdAt: iso(job.createdAt)!, creditsCharged: job.creditsCharged };
  const startedAt = iso(job.startedAt);
  if (startedAt && job.status !== 'queued') view.startedAt = startedAt;
  const finishedAt = iso(job.finishedAt);
  if (finishedAt && (job.status === 'succeeded' || job.status === 'failed')) view.finishedAt = finishedAt;
  if (job.status === 'succeeded' && job.result) {
    const result = job.result;
    view.result = {
      fileName: result.fileName,
      fileSize: result.fileSize,
      processingTime: result.processingTime,
      mime: result.mime,
      fileUrl,
      ...(result.storageUrl ? { url: result.storageUrl } : {}),
      ...(result.aiResult ? { aiResult: aiResultBody(result.aiResult) } : {}),
      ...(result.page ? { page: result.page as PageReport } : {}),
      ...(result.quality ? { quality: result.quality as CaptureQuality } : {}),
      ...(result.metadata ? { metadata: result.metadata as PageMetadata } : {}),
    };
  }
  if (job.status === 'failed') {
    const error = job.error ?? { code: 'OPERATION_FAILED', message: 'The capture failed' };
    view.error = { code: error.code, message: failureMessage(error.message) };
  }
  return view;
}
